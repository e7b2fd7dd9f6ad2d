package api

// ToolsParam is the query parameter of a project's MCP URLs (its port's
// /mcp, /sse and /ws, and /projects/{id}/mcp) that asks for a session's
// tools listing: "all" (every tool), "finder" (Berth's core tools with
// find_tools and call_tool) or "auto" (the project's mcp.finder_threshold
// decides). Without it the project's mcp.tools_listing applies.
// berth-shim's --tools sets it on its bridge.
const ToolsParam = "tools"
