package finder

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promote adds a tool called through call_tool to the listing of ss
// (finder.promote) and, the first time, tells ss its tools changed.
func (f *Finder) promote(ctx context.Context, ss *mcp.ServerSession, name string) {
	f.mu.Lock()
	set := f.promoted[ss]
	if set == nil {
		set = map[string]bool{}
		f.promoted[ss] = set
		go func() {
			_ = ss.Wait()
			f.mu.Lock()
			delete(f.promoted, ss)
			f.mu.Unlock()
		}()
	}
	added := !set[name]
	set[name] = true
	f.mu.Unlock()
	if added {
		notifyToolsChanged(ctx, ss, f.opts.Log)
	}
}

// promotedIn is the set of tools promoted in ss (nil: none).
func (f *Finder) promotedIn(ss *mcp.ServerSession) map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.promoted[ss]
}

// listChangedMeta marks the progress notification that Sending turns into
// notifications/tools/list_changed for its session alone: the go-sdk only
// sends that notification to every session at once.
const listChangedMeta = "dev.berth/finder-tools-list-changed"

// notifyToolsChanged sends notifications/tools/list_changed to ss alone,
// on the context of the call that changed its listing (so that it goes
// with the call's answer, where a client always reads). A session on MCP
// 2026-07-28 hears of list changes only on the subscription it opened for
// them, which the go-sdk keeps to itself: it sees the tool at its next
// tools/list.
func notifyToolsChanged(ctx context.Context, ss *mcp.ServerSession, log interface {
	Debug(string, ...any)
}) {
	if init := ss.InitializeParams(); init == nil || init.ProtocolVersion >= "2026-07-28" {
		return
	}
	err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{Meta: mcp.Meta{listChangedMeta: true}, ProgressToken: listChangedMeta})
	if err != nil {
		log.Debug("finder: tell a session its tools changed", "err", err)
	}
}

// Sending is the finder's sending middleware: it sends the session-only
// notifications/tools/list_changed of notifyToolsChanged, and notes the
// server's own (every session's listing may have changed).
func (f *Finder) Sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "notifications/tools/list_changed":
			f.Changed()
		case "notifications/progress":
			if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && p != nil && p.Meta[listChangedMeta] == true {
				ss, _ := req.GetSession().(*mcp.ServerSession)
				return next(ctx, "notifications/tools/list_changed",
					&mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{}})
			}
		}
		return next(ctx, method, req)
	}
}
