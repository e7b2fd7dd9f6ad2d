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
// same reports whether raw, as it is, says what res says as the go-sdk
// would encode it (content present and an array, structuredContent not
// null, isError a boolean, no _meta): the answer may then carry raw itself
// (broker/rawresult).
func toolResult(raw json.RawMessage) (res *mcp.CallToolResult, same bool, err error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, false, fmt.Errorf("the server's tools/call result: %w", err)
	}
	res = &mcp.CallToolResult{Content: []mcp.Content{}}
	same = true
	for name, v := range members {
		switch name {
		case "content":
			var items []json.RawMessage
			if err = json.Unmarshal(v, &items); err == nil && items != nil {
				res.Content = make([]mcp.Content, len(items))
				for i, item := range items {
					res.Content[i] = rawContent{raw: item}
				}
			}
			same = same && items != nil
		case "structuredContent":
			if string(v) != "null" {
				res.StructuredContent = v
			}
			same = same && string(v) != "null"
		case "isError":
			err = json.Unmarshal(v, &res.IsError)
			same = same && (string(v) == "true" || string(v) == "false")
		case "_meta":
			err = json.Unmarshal(v, &res.Meta)
			same = false
		default:
			res = &mcp.CallToolResult{}
			err = json.Unmarshal(raw, res)
			return res, false, err
		}
		if err != nil {
			return nil, false, fmt.Errorf("the server's tools/call result: %s: %w", name, err)
		}
	}
	_, hasContent := members["content"]
	return res, same && hasContent, nil
}

// rawContent is one content item of a forwarded result: it marshals to
// the bytes the server wrote. (The embedded TextContent only makes it an
// mcp.Content; it is never read.)
type rawContent struct {
	*mcp.TextContent
	raw json.RawMessage
}

func (c rawContent) MarshalJSON() ([]byte, error) { return c.raw, nil }
