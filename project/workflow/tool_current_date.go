package workflow

import (
	"context"
	"time"

	"github.com/berth-dev/berth/project/typedtool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CurrentDate is the result of current_date.
type CurrentDate struct {
	ISODateTime string `json:"iso_datetime" jsonschema:"local date and time, RFC 3339"`
	ISODate     string `json:"iso_date" jsonschema:"local date, YYYY-MM-DD"`
	Time        string `json:"time" jsonschema:"local time, HH:MM:SS"`
	Weekday     string `json:"weekday"`
	Formatted   string `json:"formatted" jsonschema:"the date as a person writes it"`
	Timezone    string `json:"timezone"`
	UTCDateTime string `json:"utc_datetime"`
	Unix        int64  `json:"unix" jsonschema:"seconds since 1970-01-01 UTC"`
}

// AddCurrentDate registers current_date, which is always on: models often do
// not know today's date.
func AddCurrentDate(s *mcp.Server) {
	addCurrentDate(s, time.Now)
}

func addCurrentDate(s *mcp.Server, now func() time.Time) {
	typedtool.Add(s, &mcp.Tool{
		Name:        ToolCurrentDate,
		Description: "Return the current date and time (ISO 8601), the weekday and the unix time. Use it instead of guessing today's date.",
		Annotations: readOnly("Current date"),
	}, func(_ context.Context, _ *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, CurrentDate, error) {
		return nil, currentDate(now()), nil
	})
}

func currentDate(t time.Time) CurrentDate {
	zone, _ := t.Zone()
	return CurrentDate{
		ISODateTime: t.Format(time.RFC3339),
		ISODate:     t.Format(time.DateOnly),
		Time:        t.Format(time.TimeOnly),
		Weekday:     t.Weekday().String(),
		Formatted:   t.Format("Monday, January 2, 2006"),
		Timezone:    zone,
		UTCDateTime: t.UTC().Format(time.RFC3339),
		Unix:        t.Unix(),
	}
}
