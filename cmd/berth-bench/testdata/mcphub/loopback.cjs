// Preloaded into mcp-hub by berth-bench (node --require): mcp-hub listens on
// a port with no host, which is every interface; the bench keeps everything
// on loopback, so a listen given only a port binds 127.0.0.1.
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args.length === 1 || typeof args[1] === 'function')) {
    args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
