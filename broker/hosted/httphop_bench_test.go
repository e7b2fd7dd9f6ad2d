package hosted

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/berth-dev/berth/broker/brokertest"
	"github.com/berth-dev/berth/broker/streamable"
)

// BenchmarkHTTPHop: server-everything's echo through a project's
// streamable HTTP session table (its fast path, the hosted surface
// installed) against the same call written as a line on a direct stdio
// connection to another copy of the server, one after the other with the
// same plain client, as berth-bench's hosted hop. hop-ms is the port's
// p50 minus direct's.
func BenchmarkHTTPHop(b *testing.B) {
	d := everythingDecl(b)
	hp := openProject(b, newPool(b, Options{}), "bench", d)
	srv := serve(b, hp)
	h := streamable.New(srv, streamable.Options{EventStore: streamable.NewEventStore()})
	srv.AddReceivingMiddleware(h.Middleware)
	ts := httptest.NewServer(h)
	defer ts.Close()
	hc := &http.Client{}
	sid := brokertest.OpenRPCSession(b, hc, ts.URL)

	cmd := exec.Command(d.Server.Command, d.Server.Args...)
	cmd.Env = os.Environ()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	br := bufio.NewReader(out)
	line := func(s string) {
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	answer := func() []byte {
		for {
			l, err := br.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			if bytes.Contains(l, []byte(`"result"`)) || bytes.Contains(l, []byte(`"error"`)) {
				return l
			}
		}
	}
	line(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	answer()
	line(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	id := 10
	viaPort := func() {
		id++
		_, raw := brokertest.PostRPC(b, hc, ts.URL, sid, []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"ping"}}}`))
		if !bytes.Contains(raw, []byte("ping")) {
			b.Fatalf("echo through the port: %s", raw)
		}
	}
	direct := func() {
		id++
		line(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"ping"}}}`)
		if raw := answer(); !bytes.Contains(raw, []byte("ping")) {
			b.Fatalf("echo direct: %s", raw)
		}
	}
	for range 50 { // warm both paths
		direct()
		viaPort()
	}
	b.ReportAllocs()
	md, mp := pair(b, "direct", "port", direct, viaPort)
	b.ReportMetric(float64((mp-md).Microseconds())/1000, "hop-ms")
}
