package hosted

import (
	"encoding/json"
	"fmt"

	"github.com/berth-dev/berth/broker/rpcmsg"
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
	var arr [4]rpcmsg.Member
	members, plain := rpcmsg.Members(raw, arr[:0]) // raw is the result's own: its members may stay in it
	if !plain {
		var byName map[string]json.RawMessage
		if err := json.Unmarshal(raw, &byName); err != nil {
			return nil, false, fmt.Errorf("the server's tools/call result: %w", err)
		}
		for name, v := range byName {
			members = append(members, rpcmsg.Member{Name: []byte(name), Value: v})
		}
	}
	res = &mcp.CallToolResult{Content: []mcp.Content{}}
	hasContent := false
	same = true
	for _, m := range members {
		name, v := string(m.Name), json.RawMessage(m.Value)
		switch name {
		case "content":
			var items [][]byte
			items, err = contentItems(v)
			if err == nil && items != nil {
				res.Content = make([]mcp.Content, len(items))
				for i, item := range items {
					res.Content[i] = rawContent{raw: item}
				}
			}
			hasContent = true
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

// contentItems are the items of a result's content, v (valid JSON): nil
// for null, an error for what is not an array.
func contentItems(v json.RawMessage) ([][]byte, error) {
	if items, ok := rpcmsg.Elements(v, nil); ok {
		return items, nil
	}
	var items []json.RawMessage
	err := json.Unmarshal(v, &items)
	if items == nil {
		return nil, err
	}
	out := make([][]byte, len(items))
	for i, item := range items {
		out[i] = item
	}
	return out, err
}
