package systest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berth-dev/berth/broker/brokertest"
)

// floodCount is how many malformed messages each transport receives.
const floodCount = 10000

// badMessage is one generated message and what the JSON-RPC spec lets the
// server do with it.
type badMessage struct {
	line []byte
	id   string // the id of a well-formed request, which must be answered (with an error)
}

// badMessages generates n malformed or unanswerable JSON-RPC messages, no
// newline inside any of them. A quarter are well-formed requests for
// methods or parameters that do not exist (each must get an error with its
// id); the rest are not JSON, not JSON-RPC, notifications or responses (an
// error with id null, or nothing).
func badMessages(seed uint64, n int) []badMessage {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	valid := `{"jsonrpc":"2.0","id":"v","method":"tools/call","params":{"name":"get_server_info","arguments":{}}}`
	out := make([]badMessage, 0, n)
	for i := range n {
		id := fmt.Sprintf("r-%d", i)
		var m badMessage
		switch k := rng.IntN(16); k {
		case 0: // random bytes, invalid UTF-8 included
			b := make([]byte, 1+rng.IntN(64))
			for j := range b {
				b[j] = byte(rng.IntN(256))
				if b[j] == '\n' || b[j] == '\r' {
					b[j] = 0xff
				}
			}
			m.line = b
		case 1: // a valid message cut short
			m.line = []byte(valid[:1+rng.IntN(len(valid)-2)])
		case 2: // JSON that is not an object
			m.line = []byte([]string{`123`, `"str"`, `[1,2]`, `null`, `true`, `[]`, `{}`, `[{}]`, `-0.5e9`}[rng.IntN(9)])
		case 3: // wrong member types
			m.line = []byte([]string{
				`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":"` + id + `","method":42}`,
				`{"jsonrpc":"1.0","id":"` + id + `","method":"tools/list"}`,
				`{"id":"` + id + `","method":"tools/list"}`,
				`{"jsonrpc":2,"id":"` + id + `","method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/list","params":"x"}`,
				`{"jsonrpc":"2.0","id":"` + id + `","result":{},"error":{"code":1,"message":"both"}}`,
			}[rng.IntN(8)])
		case 4: // notifications nobody knows: ignored
			m.line = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/bogus-%d","params":{"n":%d}}`, i, rng.IntN(1000)))
		case 5: // responses to requests never sent: ignored
			if rng.IntN(2) == 0 {
				m.line = []byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"x":1}}`)
			} else {
				m.line = []byte(`{"jsonrpc":"2.0","id":"` + id + `","error":{"code":-1,"message":"no"}}`)
			}
		case 6: // a batch (not part of MCP since 2025-06-18)
			m.line = []byte(`[{"jsonrpc":"2.0","id":"` + id + `","method":"tools/list"},{"jsonrpc":"2.0","method":"x"}]`)
		case 7: // deep nesting
			d := 1 + rng.IntN(500)
			m.line = []byte(`{"jsonrpc":"2.0","method":"notifications/deep","params":{"a":` + strings.Repeat("[", d) + strings.Repeat("]", d) + `}}`)
		case 8: // invalid UTF-8 inside a string of an otherwise valid notification
			m.line = []byte("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/utf8\",\"params\":{\"s\":\"\xff\xfe\xc3\x28\"}}")
		case 9: // a cancellation of a request that does not exist
			m.line = []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"x"}}`)
		default: // well-formed requests that must be answered with an error
			m.id = id
			m.line = []byte([]string{
				`{"jsonrpc":"2.0","id":"` + id + `","method":"no/such/method-` + id + `"}`,
				`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"no_such_tool_` + id + `"}}`,
				`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":5}}`,
				`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":[1,2]}`,
				`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"search_standards","arguments":{"query":7}}}`,
				`{"jsonrpc":"2.0","id":"` + id + `","method":"resources/read","params":{"uri":"file:///etc/passwd"}}`,
			}[k%6])
		}
		out = append(out, m)
	}
	return out
}

// rpcReply is what the tests need of a JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
}

// judge checks the replies to a flood: each well-formed request got exactly
// one error (or a tool result marked isError) with its id, every other
// reply is an error, and nothing answers an id that was not sent.
type judge struct {
	t        *testing.T
	mu       sync.Mutex
	sent     map[string]bool // ids of well-formed requests
	answered map[string]int
	nullErrs int
	others   int // replies with an id of a malformed message
}

func newJudge(t *testing.T, msgs []badMessage) *judge {
	j := &judge{t: t, sent: map[string]bool{}, answered: map[string]int{}}
	for _, m := range msgs {
		if m.id != "" {
			j.sent[m.id] = true
		}
	}
	return j
}

// see records one reply; it returns true for the reply to the final valid call.
func (j *judge) see(raw []byte) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	var r rpcReply
	if err := json.Unmarshal(raw, &r); err != nil {
		j.t.Errorf("reply is not JSON-RPC: %q", raw)
		return false
	}
	if r.Method != "" {
		return false // a server notification (logging, list changes)
	}
	var id any
	_ = json.Unmarshal(r.ID, &id)
	if id == "final" {
		if r.Error != nil || r.Result == nil || r.Result.IsError {
			j.t.Errorf("the valid call after the flood failed: %s", raw)
		}
		return true
	}
	if r.Error != nil && strings.Contains(r.Error.Message, "restarted while this request was in flight") {
		j.t.Errorf("the shim lost its broker connection during the flood: %s", raw)
	}
	isErr := r.Error != nil || (r.Result != nil && r.Result.IsError)
	if !isErr {
		j.t.Errorf("a malformed message got a success: %s", raw)
	}
	switch s, _ := id.(string); {
	case id == nil:
		j.nullErrs++
	case j.sent[s]:
		j.answered[s]++
		if j.answered[s] > 1 {
			j.t.Errorf("request %s answered twice", s)
		}
	case strings.HasPrefix(s, "r-"):
		j.others++
	default:
		j.t.Errorf("a reply to an id never sent: %s", raw)
	}
	return false
}

func (j *judge) missing() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.sent) - len(j.answered)
}

func (j *judge) report(t *testing.T, transport string, began time.Time) {
	t.Logf("%s: %d messages in %s: %d requests answered by id, %d errors with id null, %d errors for malformed ids",
		transport, floodCount, time.Since(began).Round(time.Millisecond), len(j.answered), j.nullErrs, j.others)
	if n := j.missing(); n > 0 {
		t.Errorf("%s: %d well-formed requests never answered", transport, n)
	}
}

const finalCall = `{"jsonrpc":"2.0","id":"final","method":"tools/call","params":{"name":"get_server_info","arguments":{}}}`

func TestMalformedFloodThroughTheShim(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	root := brokertest.Project(t, "flood", nil)
	cmd := exec.Command(brokertest.Shim(t), "--project", root, "--log-level", "warn")
	brokertest.DieWithTest(cmd)
	cmd.Env = append(os.Environ(), "BERTH_HOME="+b.Home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard // thousands of warnings
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	msgs := badMessages(1, floodCount)
	j := newJudge(t, msgs)
	final := make(chan struct{})
	initDone := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		first := true
		for sc.Scan() {
			if first { // the initialize reply
				first = false
				close(initDone)
				continue
			}
			if j.see(sc.Bytes()) {
				close(final)
			}
		}
	}()
	w := bufio.NewWriter(stdin)
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`)
	w.Flush()
	select {
	case <-initDone:
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to initialize")
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	began := time.Now()
	for _, m := range msgs {
		w.Write(m.line)
		w.WriteByte('\n')
	}
	fmt.Fprintln(w, finalCall)
	if err := w.Flush(); err != nil {
		t.Fatalf("write to the shim: %v", err)
	}
	select {
	case <-final:
	case <-time.After(90 * time.Second):
		t.Fatal("the valid call after the flood was never answered")
	}
	brokertest.Poll(5*time.Second, func() bool { return j.missing() == 0 }) // late replies
	j.report(t, "shim", began)
	ctx := testCtx(t, 10*time.Second)
	if _, err := b.Client.Health(ctx); err != nil {
		t.Fatalf("broker after the flood: %v", err)
	}
}

func TestMalformedFloodOverHTTP(t *testing.T) {
	t.Parallel()
	b := brokertest.StartBroker(t, brokertest.Options{})
	url := b.Attach(t, brokertest.Project(t, "floodhttp", nil)).URL
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	post := func(session string, body []byte) (*http.Response, []byte, error) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp, raw, err
	}
	resp, _, err := post("", []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`))
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %v %v", resp, err)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	if resp, _, err := post(session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %v %v", resp, err)
	}

	msgs := badMessages(2, floodCount)
	j := newJudge(t, msgs)
	began := time.Now()
	work := make(chan badMessage)
	var wg sync.WaitGroup
	var statusMu sync.Mutex
	statuses := map[int]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				resp, raw, err := post(session, m.line)
				if err != nil {
					t.Errorf("POST %q: %v", m.line, err)
					continue
				}
				statusMu.Lock()
				statuses[resp.StatusCode]++
				statusMu.Unlock()
				switch {
				case resp.StatusCode >= 500:
					t.Errorf("POST %q: %d %s", m.line, resp.StatusCode, raw)
				case resp.StatusCode == http.StatusAccepted && m.id != "":
					t.Errorf("request %s accepted without an answer", m.id)
				case resp.StatusCode == http.StatusOK:
					for _, r := range replies(resp.Header.Get("Content-Type"), raw) {
						j.see(r)
					}
				case resp.StatusCode >= 400 && m.id != "":
					j.mu.Lock()
					j.answered[m.id]++ // refused at the HTTP layer: an error answer
					j.mu.Unlock()
				}
			}
		}()
	}
	for _, m := range msgs {
		work <- m
	}
	close(work)
	wg.Wait()
	j.report(t, "http", began)
	t.Logf("http statuses: %v", statuses)
	resp, raw, err := post(session, []byte(finalCall))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("valid call after the flood: %v %v %s", resp, err, raw)
	}
	rs := replies(resp.Header.Get("Content-Type"), raw)
	if len(rs) == 0 || !j.see(rs[len(rs)-1]) {
		t.Fatalf("valid call after the flood: %s", raw)
	}
}

// replies extracts JSON-RPC messages from a streamable HTTP answer (JSON or
// an SSE stream).
func replies(contentType string, raw []byte) [][]byte {
	if strings.HasPrefix(contentType, "application/json") {
		return [][]byte{raw}
	}
	var out [][]byte
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if d, ok := bytes.CutPrefix(l, []byte("data: ")); ok && len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}
