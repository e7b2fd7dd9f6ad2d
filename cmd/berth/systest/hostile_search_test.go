//go:build linux

package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/berth-dev/berth/project/budgettest"
)

// Hostile standards files and search requests.
var _ = addHostile(
	hostileSearch("a 540 KB heading over 480 KB of short paragraphs, indexed and searched", true,
		func() map[string]string {
			return map[string]string{".praxis-os/standards/heading.md": "# " + strings.Repeat("h", 540_000) + "\n\n" + bigStandard(480_000)}
		},
		`{"query":"team agreed plain words","n_results":50}`,
		func(t *testing.T, res searchAnswer) {
			if res.Error != "" || len(res.Text) == 0 {
				t.Fatalf("search: %+v", res)
			}
			// The heading is stored cut (project/search maxHeadingBytes):
			// each of up to 50 results carries it, and the answer stays
			// small.
			if len(res.Text) > 256<<10 {
				t.Fatalf("the answer holds %d bytes: the long heading was not cut", len(res.Text))
			}
		}),
	hostileSearch("a quoted phrase repeated 142 times over four one-paragraph 1 MB files", false,
		func() map[string]string {
			files := map[string]string{}
			for i := range 4 {
				files[fmt.Sprintf(".praxis-os/standards/para%d.md", i)] = onePara(1_000_000)
			}
			return files
		},
		fmt.Sprintf(`{"query":%q}`, strings.Repeat(`"plain words" `, 142)),
		func(t *testing.T, res searchAnswer) {
			if res.Error != "" {
				t.Fatalf("search: %+v", res)
			}
		}),
	hostileSearch("filter_tags of 500,000 entries", false,
		func() map[string]string { return map[string]string{".praxis-os/standards/a.md": bigStandard(10_000)} },
		`{"query":"plain words","filter_tags":[`+strings.TrimSuffix(strings.Repeat(`"t",`, 500_000), ",")+`]}`,
		func(t *testing.T, res searchAnswer) {
			if !strings.Contains(res.Error+res.Text, "filter_tags") {
				t.Fatalf("500,000 filter_tags: not refused by name: %+v", res)
			}
		}),
)

// searchAnswer is a search_standards answer: a JSON-RPC error, or the
// result's text (an isError result's text in Error).
type searchAnswer struct {
	Error, Text string
}

// hostileSearch is an entry whose project holds files and that calls
// search_standards with args (JSON) on a raw session; check reads the
// answer. The files are indexed before the measure starts, or, with
// measureIndex, within it.
func hostileSearch(name string, measureIndex bool, files func() map[string]string, args string, check func(t *testing.T, res searchAnswer)) hostileCase {
	var s *rawSession
	open := func(t *testing.T, p *hostileProject) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		resp := p.MustAttach(ctx, t)
		p.WaitIndexed(ctx, t)
		s = p.RawSession(t, resp.Port, "2025-06-18")
	}
	return hostileCase{
		name:   name,
		budget: budgettest.Request,
		files:  files,
		prepare: func(t *testing.T, p *hostileProject) {
			if !measureIndex {
				open(t, p)
			}
		},
		run: func(_ context.Context, t *testing.T, p *hostileProject) {
			if measureIndex {
				open(t, p)
			}
			a, err := s.Post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_standards","arguments":` + args + `}}`)
			if err != nil {
				t.Fatal(err)
			}
			msgs := sseMessages(a.Body)
			if len(msgs) == 0 {
				t.Fatalf("%s %.300s", a.Status, a.Body)
			}
			var msg struct {
				Result *struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
				Error *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(msgs[len(msgs)-1], &msg); err != nil {
				t.Fatal(err)
			}
			var res searchAnswer
			switch {
			case msg.Error != nil:
				res.Error = msg.Error.Message
			case msg.Result != nil:
				var text strings.Builder
				for _, c := range msg.Result.Content {
					text.WriteString(c.Text)
				}
				if msg.Result.IsError {
					res.Error = text.String()
				} else {
					res.Text = text.String()
				}
			default:
				t.Fatalf("answer %.300s", msgs[len(msgs)-1])
			}
			check(t, res)
		},
	}
}

// onePara is a markdown file of one paragraph of about size bytes: the
// sentences of bigStandard on one line.
func onePara(size int) string {
	return strings.ReplaceAll(bigStandard(size), ".\n\n", ". ") + "\n"
}
