package planctl

import "testing"

// The update event's bytes are those of page.c's update_event: one data:
// line per line, a CR, LF or CRLF ending one (CRLF thus leaving an empty
// line between), and a final newline giving a last, empty data line.
func TestUpdateEventBytes(t *testing.T) {
	for _, c := range []struct{ html, want string }{
		{"", "event: update\ndata: \n\n"},
		{"<p>x</p>", "event: update\ndata: <p>x</p>\n\n"},
		{"a\nb", "event: update\ndata: a\ndata: b\n\n"},
		{"a\n", "event: update\ndata: a\ndata: \n\n"},
		{"a\rb", "event: update\ndata: a\ndata: b\n\n"},
		{"a\r\nb", "event: update\ndata: a\ndata: \ndata: b\n\n"},
	} {
		if got := string(updateEvent([]byte(c.html))); got != c.want {
			t.Errorf("%q: %q, want %q", c.html, got, c.want)
		}
	}
	if liveTarget("/") != "/?part=live" || liveTarget("/?q=zk") != "/?q=zk&part=live" {
		t.Errorf("live targets: %q %q", liveTarget("/"), liveTarget("/?q=zk"))
	}
}
