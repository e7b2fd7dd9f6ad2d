package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/berth-dev/berth/broker/controlapi"
)

// servePprof serves the runtime profiles (net/http/pprof) on a loopback
// address for `berth serve --pprof`; it returns the function that stops it.
// Profiles show code paths and memory, so only loopback is allowed.
func servePprof(addr string, log *slog.Logger) (func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !controlapi.IsLoopbackHost(host) {
		return nil, fmt.Errorf("--pprof %q: use a loopback address such as 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w (choose a free port)", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: controlapi.LoopbackHostOnly(controlapi.RefuseForeignOrigin(mux)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof listener stopped", "err", err)
		}
	}()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}
