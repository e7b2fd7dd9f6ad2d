package broker

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// TestSDKDecodesAMessageWithoutA32KiBBuffer guards the patched JSON
// decoder of broker/internal/segmentio-encoding (go.mod's replace): the
// go-sdk decodes every MCP message it reads through it, and the decoder
// as released allocates 32 KiB for each. If a version bump drops the
// replace, this fails: patch the new version the same way, or remove the
// replace once the go-sdk or segmentio/encoding decodes byte slices
// without it.
func TestSDKDecodesAMessageWithoutA32KiBBuffer(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: ping"}]}}`)
	const n = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := jsonrpc.DecodeMessage(msg); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 4<<10 {
		t.Fatalf("decoding a %d-byte message allocates %d bytes: the decoder is not the patched one (see go.mod's replace)", len(msg), per)
	}
}

// TestPatchedDecoderReadsAsReleased: through a reader that knows its
// length (the patched path) the decoder reads what encoding/json reads,
// from empty and truncated input to several values and values past the
// sizes it reads at once.
func TestPatchedDecoderReadsAsReleased(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", 70<<10) + `"}`
	for _, in := range []string{
		``, ` `, `{}`, `  {"a":1}  `, `{"a":1}{"b":[2,3]} "c"`, `{"a":`, `{"a":1`, `[1,2,`, `nul`, `{"a":1} x`, big, big + big,
	} {
		got := decodeAll(segjson.NewDecoder(strings.NewReader(in)))
		want := decodeAll(stdjson.NewDecoder(strings.NewReader(in)))
		if got != want {
			t.Errorf("input %.40q: patched decoder read %.80s, encoding/json %.80s", in, got, want)
		}
		// The same from a bytes.Reader, as the go-sdk passes.
		if got := decodeAll(segjson.NewDecoder(bytes.NewReader([]byte(in)))); got != want {
			t.Errorf("input %.40q from a bytes.Reader: %.80s, want %.80s", in, got, want)
		}
	}
}

type decoder interface{ Decode(any) error }

// decodeAll decodes values until an error and describes them and how it ended.
func decodeAll(d decoder) string {
	var out strings.Builder
	for range 10 {
		var v any
		err := d.Decode(&v)
		switch {
		case errors.Is(err, io.EOF):
			return out.String() + " EOF"
		case err != nil:
			return out.String() + " error"
		}
		b, _ := stdjson.Marshal(v)
		out.Write(b)
		out.WriteByte(' ')
	}
	return out.String()
}
