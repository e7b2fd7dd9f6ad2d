package brokertest

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// RPCRequest is a POST of one JSON-RPC body to a streamable HTTP endpoint
// on session sid ("" for none, protocol 2025-06-18), with the headers a
// plain client sends.
func RPCRequest(tb testing.TB, url, sid string, body []byte) *http.Request {
	tb.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

// PostRPC sends RPCRequest's POST and returns the response with its body
// read; a status other than 200 or 202 fails tb.
func PostRPC(tb testing.TB, hc *http.Client, url, sid string, body []byte) (*http.Response, []byte) {
	tb.Helper()
	resp, err := hc.Do(RPCRequest(tb, url, sid, body))
	if err != nil {
		tb.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		tb.Fatalf("POST %s: %d %s", url, resp.StatusCode, raw)
	}
	return resp, raw
}

// OpenRPCSession initializes a session on a streamable HTTP endpoint with
// PostRPC and returns its id.
func OpenRPCSession(tb testing.TB, hc *http.Client, url string) string {
	tb.Helper()
	resp, _ := PostRPC(tb, hc, url, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	sid := resp.Header.Get("Mcp-Session-Id")
	PostRPC(tb, hc, url, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return sid
}
