package brokertest

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResultText is the text of a tool result: its text blocks, one a line.
func ResultText(res *mcp.CallToolResult) string {
	if res == nil { // the call failed: the error says why
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
