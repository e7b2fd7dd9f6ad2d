package finder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/berth-dev/berth/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AreaName is the store area (data/<project id>/tools) where the finder
// keeps what each hosted server definition listed when it last ran:
//
//	tools/
//	  <definition digest> -> JSON {server, listed_at, tools: [tool as served]}
//
// Derived data: lost, a server's tools are known again once it runs. An
// entry goes when the project declares no server of its digest any more
// (Cache.Prune).
const AreaName = "tools"

// Cache keeps hosted servers' tools by definition digest, so that
// find_tools ranks the tools of a lazy server that has not started since
// the broker did.
type Cache struct {
	area *store.Area

	mu    sync.Mutex        // guards saved
	saved map[string][]byte // digest -> the tools JSON last saved or read
}

// cacheEntry is one stored value.
type cacheEntry struct {
	Server   string          `json:"server"`
	ListedAt time.Time       `json:"listed_at"`
	Tools    json.RawMessage `json:"tools"`
}

// NewCache is the cache of one project in db.
func NewCache(db *store.DB, projectID string) *Cache {
	return &Cache{area: db.Area(projectID, AreaName), saved: map[string][]byte{}}
}

// Save keeps the tools server (of definition digest) lists now; the same
// list as before is not written again.
func (c *Cache) Save(server, digest string, tools []*mcp.Tool) error {
	raw, err := json.Marshal(tools)
	if err != nil {
		return fmt.Errorf("encode the tools of %s: %w", server, err)
	}
	c.mu.Lock()
	same := bytes.Equal(c.saved[digest], raw)
	c.mu.Unlock()
	if same {
		return nil
	}
	val, err := json.Marshal(cacheEntry{Server: server, ListedAt: time.Now().UTC(), Tools: raw})
	if err != nil {
		return err
	}
	if err := c.area.Update(func(b *store.Bucket) error { return b.Put([]byte(digest), val) }); err != nil {
		return fmt.Errorf("keep the tools of %s: %w", server, err)
	}
	c.mu.Lock()
	c.saved[digest] = raw
	c.mu.Unlock()
	return nil
}

// Load returns the tools last saved for digest, or nil.
func (c *Cache) Load(digest string) ([]*mcp.Tool, error) {
	c.mu.Lock()
	raw, ok := c.saved[digest]
	c.mu.Unlock()
	if !ok {
		var val []byte
		if err := c.area.View(func(b *store.Bucket) error { val = b.Get([]byte(digest)); return nil }); err != nil {
			return nil, err
		}
		if val == nil {
			return nil, nil
		}
		var e cacheEntry
		if err := json.Unmarshal(val, &e); err != nil {
			return nil, fmt.Errorf("stored tools of definition %s: %w", digest, err)
		}
		raw = e.Tools
		c.mu.Lock()
		c.saved[digest] = raw
		c.mu.Unlock()
	}
	var tools []*mcp.Tool
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, fmt.Errorf("stored tools of definition %s: %w", digest, err)
	}
	return tools, nil
}

// Prune drops the entries of definitions not in keep.
func (c *Cache) Prune(keep map[string]bool) error {
	var gone [][]byte
	err := c.area.View(func(b *store.Bucket) error {
		return b.ForEach(func(k, _ []byte) error {
			if !keep[string(k)] {
				gone = append(gone, bytes.Clone(k))
			}
			return nil
		})
	})
	if err != nil || len(gone) == 0 {
		return err
	}
	c.mu.Lock()
	for _, k := range gone {
		delete(c.saved, string(k))
	}
	c.mu.Unlock()
	return c.area.Update(func(b *store.Bucket) error {
		for _, k := range gone {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}
