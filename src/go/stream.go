package planctl

// The /stream of WebHandler: Server-Sent Events that keep a page live, as
// `planctl serve` sends them (src/serve/page.c), byte for byte where the
// page's script can tell.

/*
#include <stdlib.h>
#include "planctl.h"
*/
import "C"

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
)

const (
	liveTick   = 250 * time.Millisecond // how often the watcher asks for changes
	liveFollow = time.Second            // a page following output: rendered this often
	livePing   = 15 * time.Second       // a comment on idle streams, so proxies keep them
)

// streamHead starts every stream: the page's EventSource reconnects after
// a second when the stream drops.
const streamHead = "retry: 1000\n\n"

// webLive is one handler's watcher of the database: while streams are
// open, one goroutine asks the DB four times a second whether another
// handle committed (planctl_data_version, one cheap statement), and when
// one did, which pages the new events touch (planctl_web_changes_read),
// and wakes the streams showing them.  A stream thus costs nothing while
// its page does not change, however many are open.
type webLive struct {
	db   *DB
	mu   sync.Mutex
	subs map[*webSub]struct{}
	stop context.CancelFunc // of the running watcher; nil: none runs
}

// webSub is one open stream, as the watcher sees it.
type webSub struct {
	page *C.char       // the page, for planctl_web_changes_touch; freed on leaving
	wake chan struct{} // holds a token when the page was touched since the stream looked
}

func (s *webSub) poke() {
	select {
	case s.wake <- struct{}{}:
	default: // already woken
	}
}

// join adds a stream of page, starting the watcher if none runs.  The
// watcher's first look happens here, before the stream renders its page,
// so that no change falls between the two.  Fails (ctx's error, the DB's)
// only when that first look does.
func (l *webLive) join(ctx context.Context, page string) (*webSub, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop == nil {
		var version, seq C.int64_t
		err := l.db.do(ctx, func(p *C.planctl) C.int {
			if rc := C.planctl_data_version(&version, p); rc < 0 {
				return rc
			}
			var ch *C.planctl_web_changes
			seq = C.PLANCTL_WEB_SINCE_NOW
			rc := C.planctl_web_changes_read(&ch, p, &seq)
			C.planctl_web_changes_free(ch)
			return rc
		})
		if err != nil {
			return nil, err
		}
		wctx, cancel := context.WithCancel(context.Background())
		l.stop = cancel
		go l.watch(wctx, int64(version), int64(seq))
	}
	if l.subs == nil {
		l.subs = map[*webSub]struct{}{}
	}
	s := &webSub{page: cstr(page), wake: make(chan struct{}, 1)}
	l.subs[s] = struct{}{}
	return s, nil
}

// leave removes a stream; the last to leave stops the watcher.
func (l *webLive) leave(s *webSub) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.subs, s)
	free(s.page)
	s.page = nil
	if len(l.subs) == 0 && l.stop != nil {
		l.stop()
		l.stop = nil
	}
}

// watch looks for changes every liveTick until ctx ends, from the data
// version and the event seq of join's first look.
func (l *webLive) watch(ctx context.Context, version, seq int64) {
	t := time.NewTicker(liveTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var ch *C.planctl_web_changes
		changed := false
		l.db.do(ctx, func(p *C.planctl) C.int {
			var v C.int64_t
			if rc := C.planctl_data_version(&v, p); rc < 0 || int64(v) == version {
				return rc
			}
			version, changed = int64(v), true
			s := C.int64_t(seq)
			rc := C.planctl_web_changes_read(&ch, p, &s)
			seq = int64(s)
			return rc
		})
		// A failed read leaves ch NULL: every page is touched, as in
		// planctl serve.  The error is the DB's (closed, gone) and shows
		// on the pages themselves.
		if !changed {
			continue
		}
		l.mu.Lock()
		if ctx.Err() == nil {
			for s := range l.subs {
				if ch == nil || C.planctl_web_changes_touch(ch, s.page) != 0 {
					s.poke()
				}
			}
		}
		l.mu.Unlock()
		C.planctl_web_changes_free(ch)
	}
}

// liveTarget is the request target of a page's live part.
func liveTarget(page string) string {
	if strings.Contains(page, "?") {
		return page + "&part=live"
	}
	return page + "?part=live"
}

// updateEvent is the event carrying a page's new live part: one data:
// line per line of it (a CR, LF or CRLF ends a line, as page.c splits).
func updateEvent(html []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: update\n")
	for i := 0; ; {
		e := i
		for e < len(html) && html[e] != '\n' && html[e] != '\r' {
			e++
		}
		b.WriteString("data: ")
		b.Write(html[i:e])
		b.WriteByte('\n')
		if e >= len(html) {
			break
		}
		i = e + 1
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// serveStream answers GET /stream?path=PAGE: the page's live part, again
// whenever a change touches it and its ETag moved, until the request's
// context ends.
func (db *DB) serveStream(w http.ResponseWriter, r *http.Request, cfg *webConfig, live *webLive) {
	target := cstr(r.URL.RequestURI())
	var out *C.char
	rc := C.planctl_web_stream_page(&out, target)
	free(target)
	page := string(takeString(out))
	if rc == C.PLANCTL_ENOMEM {
		http.Error(w, "out of memory", http.StatusInternalServerError)
		return
	}
	if rc < 0 {
		http.Error(w, "bad request: /stream?path=PAGE names a page, e.g. /stream?path=%2Finstances%2Fzk",
			http.StatusBadRequest)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "cannot stream: the server's ResponseWriter is not an http.Flusher (a middleware wrapping it?)",
			http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	sub, err := live.join(ctx, page)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer live.leave(sub)
	lt := liveTarget(page)
	a, err := db.webRespond(ctx, cfg, &webRequest{method: http.MethodGet, target: lt,
		host: r.Host, origin: r.Header.Get("Origin")})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if a.status != http.StatusOK {
		a.write(w, false) // the page is not there (404): as the library says
		return
	}
	etag, follow := a.header("ETag"), a.header("X-Planctl-Follow") != ""
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	ping := time.NewTimer(livePing)
	defer ping.Stop()
	followTick := time.NewTicker(liveFollow)
	defer followTick.Stop()
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		fl.Flush()
		// Not a blocking receive: from Go 1.23 a stopped timer's
		// channel holds nothing.  A tick that slips past makes one ping
		// early, which is harmless.
		if !ping.Stop() {
			select {
			case <-ping.C:
			default:
			}
		}
		ping.Reset(livePing)
		return true
	}
	// The stream starts with the live part as it is now: a change between
	// the page's load and this request would otherwise never be sent, as
	// etag already has it.
	if !send(append([]byte(streamHead), updateEvent(a.body)...)) {
		return
	}
	for {
		var followC <-chan time.Time
		if follow {
			followC = followTick.C
		}
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			if !send([]byte(": ping\n\n")) {
				return
			}
			continue
		case <-sub.wake:
		case <-followC:
		}
		a, err := db.webRespond(ctx, cfg, &webRequest{method: http.MethodGet, target: lt})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			continue // the DB's error: the next change tries again
		}
		follow = a.header("X-Planctl-Follow") != ""
		if a.status != http.StatusOK {
			continue // gone (deleted): the page says so when reloaded
		}
		if tag := a.header("ETag"); tag != etag {
			if !send(updateEvent(a.body)) {
				return
			}
			etag = tag
		}
	}
}
