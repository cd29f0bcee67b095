package planctl_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sseBlocks reads Server-Sent Events from body: each block of lines up to
// a blank line, until the body ends (then the channel closes).
func sseBlocks(body io.Reader) <-chan []string {
	out := make(chan []string, 64)
	go func() {
		defer close(out)
		br := bufio.NewReader(body)
		var block []string
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			if line == "" {
				out <- block
				block = nil
				continue
			}
			block = append(block, line)
		}
	}()
	return out
}

// nextUpdate returns the next "event: update" block's data, joined by
// newlines, skipping comments (pings); it fails the test after 30 s.
func nextUpdate(t *testing.T, blocks <-chan []string) string {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case b, ok := <-blocks:
			if !ok {
				t.Fatal("the stream ended before an update")
			}
			if len(b) == 0 || strings.HasPrefix(b[0], ":") {
				continue
			}
			if b[0] != "event: update" {
				t.Fatalf("an event that is not an update: %q", b)
			}
			var data []string
			for _, l := range b[1:] {
				if !strings.HasPrefix(l, "data: ") {
					t.Fatalf("a line of an update that is not data: %q", l)
				}
				data = append(data, strings.TrimPrefix(l, "data: "))
			}
			return strings.Join(data, "\n")
		case <-deadline.C:
			t.Fatal("no update within 30 s")
		}
	}
}

func getBody(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	must(t, err)
	return resp, readAll(t, resp)
}

// WebHandler's /stream: an instance's page gets its live part again when
// that instance changes (through another handle, as an engine's), and not
// for another instance's change; bad targets are refused as planctl serve
// refuses them; a stream ends with its request.
func TestWebStream(t *testing.T) {
	uri := testURI(t)
	db := open(t, uri)
	other := open(t, uri)
	ctx := context.Background()
	must(t, other.RegisterKind(ctx, "GoWork"))
	_, err := other.ApplyDefinition(ctx, []byte(goDef), "g.json")
	must(t, err)
	for _, name := range []string{"a", "b"} {
		_, err = other.Create(ctx, name, "g", nil)
		must(t, err)
	}
	h := db.WebHandler()
	srv := httptest.NewServer(h)
	closed := false
	defer func() {
		if !closed {
			srv.Close()
		}
	}()

	// The pages open the stream.
	resp, body := getBody(t, srv.URL+"/instances/a")
	if resp.StatusCode != 200 || !strings.Contains(body, `data-stream="1"`) {
		t.Fatalf("the page does not open /stream: %d\n%s", resp.StatusCode, body)
	}
	for _, bad := range []string{"/stream", "/stream?path=instances", "/stream?path=%2Fapi%2Fv1%2Finstances",
		"/stream?path=%2Finstances%2Fa%3Fpart%3Dlive"} {
		resp, body = getBody(t, srv.URL+bad)
		if resp.StatusCode != 400 || body != "bad request: /stream?path=PAGE names a page, e.g. /stream?path=%2Finstances%2Fzk\n" {
			t.Fatalf("%s: %d %q", bad, resp.StatusCode, body)
		}
	}
	resp, _ = getBody(t, srv.URL+"/stream?path=%2Finstances%2Fnone")
	if resp.StatusCode != 404 {
		t.Fatalf("a stream of a page that is not there: %d", resp.StatusCode)
	}
	noFlush := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(struct{ http.ResponseWriter }{w}, r)
	}))
	resp, body = getBody(t, noFlush.URL+"/stream?path=%2Finstances%2Fa")
	noFlush.Close()
	if resp.StatusCode != 500 || !strings.Contains(body, "http.Flusher") {
		t.Fatalf("a ResponseWriter that cannot flush: %d %q", resp.StatusCode, body)
	}

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, "GET", srv.URL+"/stream?path=%2Finstances%2Fa", nil)
	must(t, err)
	resp, err = http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.Header.Get("Cache-Control") != "no-store" || resp.ContentLength != -1 {
		t.Fatalf("the stream's answer: %d %v", resp.StatusCode, resp.Header)
	}
	blocks := sseBlocks(resp.Body)
	select {
	case b := <-blocks:
		if strings.Join(b, "\n") != "retry: 1000" {
			t.Fatalf("the stream starts with %q", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stream sent nothing within 30 s")
	}

	// The stream starts with the live part as it is.
	got := nextUpdate(t, blocks)
	resp, body = getBody(t, srv.URL+"/instances/a?part=live")
	if resp.StatusCode != 200 || body != got {
		t.Fatalf("the stream's first event is not the live part of the page:\n%s\n---\n%s", got, body)
	}

	// b's change touches a's page not: the next update is a's own.
	_, err = other.Cancel(ctx, "b")
	must(t, err)
	_, err = other.Cancel(ctx, "a")
	must(t, err)
	got = nextUpdate(t, blocks)
	st, err := other.Status(ctx, "a")
	must(t, err)
	if run := st.Plan("deploy").Run; run == nil || !strings.Contains(got, string(run.Status)) {
		t.Fatalf("the update does not show a's run (%+v):\n%s", run, got)
	}
	resp, body = getBody(t, srv.URL+"/instances/a?part=live")
	if resp.StatusCode != 200 || body != got {
		t.Fatalf("the update is not the live part of the page:\n%s\n---\n%s", got, body)
	}

	// The request's end ends the stream: Close waits for its handler.
	cancel()
	done := make(chan struct{})
	go func() {
		srv.Close()
		close(done)
	}()
	select {
	case <-done:
		closed = true
	case <-time.After(30 * time.Second):
		t.Fatal("the stream's handler did not end with its request")
	}
}
