package hosted

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionlessProtocol is the first MCP version whose requests carry the
// client's per-request _meta, which the go-sdk's client adds: calls to a
// server on it go through the go-sdk.
const sessionlessProtocol = "2026-07-28"

// toolResult makes a server's tools/call result, as it wrote it, the
// result the caller gets: content items and structuredContent pass as the
// server wrote them (each item marshals to its own bytes), isError and
// _meta are read. A result with any other member (a sessionless server's
// resultType, inputRequests, ...) is decoded by the go-sdk, as before.
func toolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, fmt.Errorf("the server's tools/call result: %w", err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{}}
	for name, v := range members {
		var err error
		switch name {
		case "content":
			var items []json.RawMessage
			if err = json.Unmarshal(v, &items); err == nil && items != nil {
				res.Content = make([]mcp.Content, len(items))
				for i, item := range items {
					res.Content[i] = rawContent{raw: item}
				}
			}
		case "structuredContent":
			if string(v) != "null" {
				res.StructuredContent = v
			}
		case "isError":
			err = json.Unmarshal(v, &res.IsError)
		case "_meta":
			err = json.Unmarshal(v, &res.Meta)
		default:
			res = &mcp.CallToolResult{}
			err = json.Unmarshal(raw, res)
			return res, err
		}
		if err != nil {
			return nil, fmt.Errorf("the server's tools/call result: %s: %w", name, err)
		}
	}
	return res, nil
}

// rawContent is one content item of a forwarded result: it marshals to
// the bytes the server wrote. (The embedded TextContent only makes it an
// mcp.Content; it is never read.)
type rawContent struct {
	*mcp.TextContent
	raw json.RawMessage
}

func (c rawContent) MarshalJSON() ([]byte, error) { return c.raw, nil }
