package rpcmsg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzMembersAsEncodingJSON: what Members and Elements read is what
// encoding/json reads of the same bytes: an object's members by name with
// their values, an array's elements, in order; where they read nothing,
// the caller asks encoding/json (Members refuses what it would read
// otherwise, never the other way round).
func FuzzMembersAsEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`[]`, `[1, "a", {"b":[2]}, null ]`, `{"content":[{"type":"text","text":"x"}],"isError":false}`, `[1,]`, `[1 2]`, `{"a":[}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := compareMembers(data); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
	})
}

func TestMembersAsEncodingJSON(t *testing.T) {
	for _, s := range append(seeds, `[]`, `[1, "a", {"b":[2]}, null ]`, `{ }`, `{"a" : {"b":"}"} , "c":[] }`) {
		if err := compareMembers([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func compareMembers(data []byte) error {
	if members, ok := Members(data, nil); ok {
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			return fmt.Errorf("Members reads %d members, encoding/json fails: %v", len(members), err)
		}
		if len(members) != len(want) {
			return fmt.Errorf("Members reads %d members, encoding/json %d", len(members), len(want))
		}
		for _, m := range members {
			if w, ok := want[string(m.Name)]; !ok || !bytes.Equal(m.Value, w) {
				return fmt.Errorf("member %s: %s, encoding/json %s", m.Name, m.Value, w)
			}
		}
	}
	if !json.Valid(data) {
		return nil // Elements reads only valid JSON
	}
	if items, ok := Elements(data, nil); ok {
		var want []json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			return fmt.Errorf("Elements reads %d items, encoding/json fails: %v", len(items), err)
		}
		if len(items) != len(want) || want == nil {
			return fmt.Errorf("Elements reads %d items, encoding/json %d", len(items), len(want))
		}
		for i := range items {
			if !bytes.Equal(items[i], want[i]) {
				return fmt.Errorf("item %d: %s, encoding/json %s", i, items[i], want[i])
			}
		}
	}
	return nil
}
