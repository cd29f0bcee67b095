package planctl_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"planctl.dev/planctl"
)

func TestErrorCodes(t *testing.T) {
	codes := []planctl.Code{planctl.ErrInternal, planctl.ErrNoMem, planctl.ErrInvalid,
		planctl.ErrIO, planctl.ErrNotFound, planctl.ErrConflict, planctl.ErrTransition,
		planctl.ErrStale, planctl.ErrNotDB, planctl.ErrTooNew, planctl.ErrBusy,
		planctl.ErrDefinition, planctl.ErrReadOnly, planctl.ErrPreflight, planctl.ErrMismatch,
		planctl.ErrInterrupted}
	// Every code of planctl.h has its constant: the library knows no
	// code past the last one.
	for i, c := range codes {
		if int(c) != -(i + 1) {
			t.Errorf("%s is %d, want %d", c.Name(), int(c), -(i + 1))
		}
		if c.Name() == "PLANCTL_UNKNOWN" {
			t.Errorf("code %d unknown to the library", int(c))
		}
		err := error(&planctl.Error{Code: c, Msg: "m"})
		if !errors.Is(err, c) {
			t.Errorf("errors.Is(%s) false", c.Name())
		}
	}
	if name := planctl.Code(-(len(codes) + 1)).Name(); name != "PLANCTL_UNKNOWN" {
		t.Errorf("the library has a code the package lacks: %s", name)
	}

	db := open(t, testURI(t))
	_, err := db.Status(context.Background(), "nosuch")
	if !errors.Is(err, planctl.ErrNotFound) || errors.Is(err, planctl.ErrBusy) {
		t.Fatalf("status of a missing instance: %v", err)
	}
	var pe *planctl.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "nosuch") {
		t.Fatalf("the message does not name the instance: %#v", err)
	}
	_, err = db.ApplyDefinition(context.Background(), []byte(`{"name":"x"`), "x.json")
	if !errors.Is(err, planctl.ErrDefinition) || !strings.Contains(err.Error(), "x.json") {
		t.Fatalf("bad definition: %v", err)
	}
}

const goDef = `{"name":"g","version":"1",
 "parameters":[{"name":"WHO","default":"world"}],
 "tasks":[
  {"name":"make","kind":"GoWork","spec":{"mode":"output"}},
  {"name":"flaky","kind":"GoWork","spec":{"mode":"flaky"}},
  {"name":"use","kind":"shell","spec":{"command":"case \"$PLANCTL_OUTPUT_MAKE_GREETING\" in 'hello '?*) ;; *) exit 1;; esac"}},
  {"name":"read","kind":"GoWork","spec":{"mode":"read"}},
  {"name":"fatal","kind":"GoWork","spec":{"mode":"fatal"}},
  {"name":"block","kind":"GoWork","spec":{"mode":"block"}}],
 "plans":{
  "deploy":{"phases":[
   {"name":"one","strategy":"parallel","steps":[
     {"name":"make","tasks":["make"]},
     {"name":"flaky","tasks":["flaky"],"retry":{"attempts":3,"backoff":"10ms"}}]},
   {"name":"two","steps":[{"name":"use","tasks":["use"]},{"name":"read","tasks":["read"]}]}]},
  "broken":{"phases":[{"name":"p","steps":[{"name":"fatal","tasks":["fatal"]}]}]},
  "wait":{"phases":[{"name":"p","strategy":"parallel","steps":[
     {"name":"b1","tasks":["block"]},{"name":"b2","tasks":["block"]},
     {"name":"b3","tasks":["block"]},{"name":"b4","tasks":["block"]}]}]}}}`

// goWork is the executor of the test definition's GoWork kind.
type goWork struct {
	mu       sync.Mutex
	tries    map[string]int
	blocked  chan string
	released int32
}

func newGoWork() *goWork {
	return &goWork{tries: map[string]int{}, blocked: make(chan string, 1000)}
}

func (g *goWork) run(ctx context.Context, t *planctl.Task) (planctl.Result, error) {
	var spec struct{ Mode string }
	if err := jsonUnmarshal(t.Spec, &spec); err != nil {
		return planctl.Result{}, planctl.Fatal(err)
	}
	key := t.Instance + "/" + t.Step
	g.mu.Lock()
	g.tries[key]++
	n := g.tries[key]
	g.mu.Unlock()
	switch spec.Mode {
	case "output":
		var p struct{ WHO string }
		if err := jsonUnmarshal(t.Params, &p); err != nil {
			return planctl.Result{}, planctl.Fatal(err)
		}
		if err := t.AddOutput("GREETING", "hello "+p.WHO); err != nil {
			return planctl.Result{}, err
		}
		if err := t.SetOutput(0, "made a greeting\n"); err != nil {
			return planctl.Result{}, err
		}
		return planctl.Result{Message: "greeting made"}, nil
	case "flaky":
		switch n {
		case 1:
			return planctl.Result{}, planctl.NotDone
		case 2:
			return planctl.Result{}, errors.New("flaked once")
		}
		return planctl.Result{}, nil
	case "read":
		if !strings.Contains(string(t.Outputs), `"GREETING": "hello`) &&
			!strings.Contains(string(t.Outputs), `"GREETING":"hello`) {
			return planctl.Result{}, planctl.Fatal(fmt.Errorf("no greeting in %s", t.Outputs))
		}
		return planctl.Result{}, nil
	case "fatal":
		return planctl.Result{}, planctl.Fatal(errors.New("cannot ever work"))
	case "block":
		g.blocked <- key
		<-ctx.Done()
		atomic.AddInt32(&g.released, 1)
		return planctl.Result{}, fmt.Errorf("stopped: %w", ctx.Err())
	}
	return planctl.Result{}, planctl.Fatal(fmt.Errorf("unknown mode %q", spec.Mode))
}

// setup applies the test definition through db and returns an engine
// with the GoWork executor.
func setup(t *testing.T, uri string, db *planctl.DB, g *goWork, opts ...planctl.EngineOption) *planctl.Engine {
	t.Helper()
	ctx := context.Background()
	must(t, db.RegisterKind(ctx, "GoWork"))
	if _, err := db.ApplyDefinition(ctx, []byte(goDef), "g.json"); err != nil {
		t.Fatal(err)
	}
	opts = append([]planctl.EngineOption{planctl.WithChangePoll(20 * time.Millisecond),
		planctl.WithTaskPoll(20 * time.Millisecond)}, opts...)
	e, err := planctl.NewEngine(ctx, uri, opts...)
	must(t, err)
	t.Cleanup(func() { e.Close() })
	must(t, e.Register("GoWork", g.run))
	return e
}

func TestEndToEnd(t *testing.T) {
	uri := testURI(t)
	db := open(t, uri)
	g := newGoWork()
	var logMu sync.Mutex
	var logged []string
	e := setup(t, uri, db, g, planctl.WithUntilIdle(),
		planctl.WithLogger(planctl.LogInfo, func(r planctl.LogRecord) {
			logMu.Lock()
			logged = append(logged, r.Msg)
			logMu.Unlock()
		}))
	ctx := context.Background()
	a, err := db.Create(ctx, "a", "g", planctl.Params{"WHO": "world"})
	must(t, err)
	if a.Run == 0 || a.Status != planctl.StatusPending || a.Plan != "deploy" {
		t.Fatalf("admitted %+v", a)
	}
	_, err = db.Create(ctx, "b", "g", nil)
	must(t, err)
	must(t, e.Run(ctx))

	st, err := db.Status(ctx, "a")
	must(t, err)
	run := st.Plan("deploy").Run
	if run.Status != planctl.StatusComplete {
		t.Fatalf("deploy of a: %s\n%s", run.Status, st.Raw)
	}
	if run.StartedAt == nil || run.FinishedAt == nil || run.FinishedAt.Before(*run.StartedAt) {
		t.Fatalf("times: %v %v", run.StartedAt, run.FinishedAt)
	}
	steps := map[string]planctl.Step{}
	for _, ph := range run.Phases {
		for _, s := range ph.Steps {
			steps[s.Name] = s
		}
	}
	if s := steps["flaky"]; s.Status != planctl.StatusComplete || s.Attempt != 2 {
		// NOT_DONE restarts the same attempt; the ERROR made a second.
		t.Fatalf("flaky: %+v", s)
	}
	if s := steps["make"]; s.Message == nil || *s.Message != "greeting made" {
		t.Fatalf("make: %+v", s)
	}
	g.mu.Lock()
	if g.tries["a/flaky"] != 3 {
		t.Errorf("flaky ran %d times, want 3", g.tries["a/flaky"])
	}
	g.mu.Unlock()

	// Fatal: the run ends FATAL_ERROR with the error's text.
	e2 := setup(t, uri, db, g, planctl.WithUntilIdle())
	_, err = db.Trigger(ctx, "a", "broken")
	must(t, err)
	_, err = db.Trigger(ctx, "a", "deploy")
	if !errors.Is(err, planctl.ErrConflict) {
		t.Fatalf("a second active run: %v", err)
	}
	must(t, e2.Run(ctx))
	r := waitRun(t, db, "a", "broken")
	if m := r.Phases[0].Steps[0].Message; r.Status != planctl.StatusFatalError || m == nil || !strings.Contains(*m, "cannot ever work") {
		t.Fatalf("broken: %+v", r)
	}
	h, err := db.History(ctx, "a", planctl.WithHistoryLimit(10))
	must(t, err)
	if len(h.Runs) != 2 || h.Runs[0].Plan != "broken" || h.Runs[1].Plan != "deploy" {
		t.Fatalf("history: %s", h.Raw)
	}
	logMu.Lock()
	if !strings.Contains(strings.Join(logged, "|"), "run started") {
		t.Errorf("logger got %q", logged)
	}
	logMu.Unlock()
}

// An engine stopped from another goroutine while its executors block:
// each executor's context is cancelled, each reports, and Run returns.
func TestStopWhileExecutorsBlock(t *testing.T) {
	uri := testURI(t)
	db := open(t, uri)
	g := newGoWork()
	e := setup(t, uri, db, g, planctl.WithStopGrace(50*time.Millisecond))
	ctx := context.Background()
	const n = 5
	for i := 0; i < n; i++ {
		_, err := db.Create(ctx, fmt.Sprintf("w%d", i), "g", nil)
		must(t, err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	// Once every deploy is past its first phase... simpler: trigger the
	// blocking plan after the deploys ended.
	for i := 0; i < n; i++ {
		waitRun(t, db, fmt.Sprintf("w%d", i), "deploy")
		_, err := db.Trigger(ctx, fmt.Sprintf("w%d", i), "wait")
		must(t, err)
	}
	for i := 0; i < 4*n; i++ {
		<-g.blocked
	}
	if !e.Healthy() {
		t.Error("a running engine is not healthy")
	}
	srv := httptest.NewServer(e.MetricsHandler())
	resp, err := http.Get(srv.URL)
	must(t, err)
	body := readAll(t, resp)
	srv.Close()
	if !strings.Contains(body, "planctl_running_steps 20") {
		t.Errorf("metrics while 20 steps block:\n%s", body)
	}
	go stop() // from another goroutine
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := atomic.LoadInt32(&g.released); got != 4*n {
		t.Fatalf("%d executors saw their context end, want %d", got, 4*n)
	}
	if e.Healthy() {
		t.Error("a stopped engine is healthy")
	}
	rec := httptest.NewRecorder()
	e.HealthHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("healthz of a stopped engine: %d", rec.Code)
	}
	st, err := db.Status(ctx, "w0")
	must(t, err)
	for _, s := range st.Plan("wait").Run.Phases[0].Steps {
		if s.Status != planctl.StatusError {
			t.Errorf("step %s after the stop: %s", s.Name, s.Status)
		}
	}
}

// Many goroutines: each on a handle of its own, and all on one shared
// handle, while the engine runs.
func TestConcurrentHandles(t *testing.T) {
	uri := testURI(t)
	shared := open(t, uri)
	g := newGoWork()
	e := setup(t, uri, shared, g)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers*10)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			own, err := planctl.Open(context.Background(), uri)
			if err != nil {
				errs <- err
				return
			}
			defer own.Close()
			name := fmt.Sprintf("c%d", w)
			if _, err := own.Create(context.Background(), name, "g", planctl.Params{"WHO": name}); err != nil {
				errs <- err
				return
			}
			for i := 0; i < 3; i++ {
				if _, err := shared.Trigger(context.Background(), name, "deploy", planctl.WithQueue()); err != nil {
					errs <- err
				}
				if _, err := shared.Status(context.Background(), name); err != nil {
					errs <- err
				}
				if _, err := own.History(context.Background(), name); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := 0; w < workers; w++ {
		name := fmt.Sprintf("c%d", w)
		for {
			h, err := shared.History(context.Background(), name)
			must(t, err)
			ended := 0
			for _, r := range h.Runs {
				if r.Status == planctl.StatusComplete {
					ended++
				} else if r.Status.Terminal() {
					t.Fatalf("%s: %s", name, h.Raw)
				}
			}
			if ended == 4 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stop()
	must(t, <-done)
}

func TestFollowAndWeb(t *testing.T) {
	uri := testURI(t)
	db := open(t, uri)
	g := newGoWork()
	e := setup(t, uri, db, g, planctl.WithUntilIdle())
	ctx := context.Background()
	first, err := db.Events(ctx, planctl.WithEventsTail(1))
	must(t, err)
	_, err = db.Create(ctx, "f", "g", nil)
	must(t, err)
	go e.Run(ctx)
	s := db.Follow(first.LastSeq, 10*time.Millisecond, planctl.WithEventsInstance("f"))
	tctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var seen []string
	for {
		ev, err := s.Next(tctx)
		must(t, err)
		if ev.Entity == "run" && ev.To != nil {
			seen = append(seen, string(*ev.To))
			if ev.To.Terminal() {
				break
			}
		}
	}
	if strings.Join(seen, " ") != "PENDING IN_PROGRESS COMPLETE" {
		t.Fatalf("the run went %v", seen)
	}

	mux := http.NewServeMux()
	mux.Handle("/", db.WebHandler())
	mux.Handle("/healthz", e.HealthHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/instances")
	must(t, err)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(body, `"f"`) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("api: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, err = http.Get(srv.URL + "/instances/f")
	must(t, err)
	body = readAll(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(body, "deploy") ||
		resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("page: %d %v", resp.StatusCode, resp.Header)
	}
	resp, err = http.Post(srv.URL+"/api/v1/instances/f/trigger", "application/json", strings.NewReader(`{"plan":"deploy"}`))
	must(t, err)
	readAll(t, resp)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an action on a read-only handler: %d", resp.StatusCode)
	}
}

// Close while Run runs (a test's Fatal, a deferred Close on an error
// path): it stops the engine at once, cancelling the executors, and
// returns once Run has.
func TestCloseWhileRunning(t *testing.T) {
	uri := testURI(t)
	db := open(t, uri)
	g := newGoWork()
	e := setup(t, uri, db, g)
	ctx := context.Background()
	_, err := db.Create(ctx, "x", "g", nil)
	must(t, err)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }() // ctx never ends
	waitRun(t, db, "x", "deploy")
	_, err = db.Trigger(ctx, "x", "wait")
	must(t, err)
	for i := 0; i < 4; i++ {
		<-g.blocked
	}
	closed := make(chan struct{})
	go func() { e.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Minute):
		t.Fatal("Close did not return while Run ran")
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := atomic.LoadInt32(&g.released); got != 4 {
		t.Fatalf("%d executors saw their context end, want 4", got)
	}
	if e.Healthy() {
		t.Error("a closed engine is healthy")
	}
}

// A context that ends interrupts the call in progress: here an admission
// whose preflight check would sleep two minutes.
func TestContextInterruptsAdmission(t *testing.T) {
	uri := testURI(t)
	db := open(t, uri)
	dir := t.TempDir()
	def := `{"name":"pf","version":"1",
	 "parameters":[{"name":"DIR","required":true}],
	 "tasks":[{"name":"noop","kind":"Dummy"},
	  {"name":"sleepy","kind":"shell","spec":{"command":"touch \"$PLANCTL_PARAM_DIR/started\"; exec sleep 120"}}],
	 "plans":{"deploy":{"phases":[{"name":"p","steps":[{"name":"s","tasks":["noop"]}]}]},
	  "backup":{"preflight":[{"name":"Sleepy","task":"sleepy"}],
	   "phases":[{"name":"p","steps":[{"name":"s","tasks":["noop"]}]}]}}}`
	ctx := context.Background()
	_, err := db.ApplyDefinition(ctx, []byte(def), "pf.json")
	must(t, err)
	_, err = db.Create(ctx, "pf", "pf", planctl.Params{"DIR": dir})
	must(t, err)
	_, err = db.Cancel(ctx, "pf")
	must(t, err)

	callCtx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err = db.Trigger(callCtx, "pf", "backup", planctl.WithPreflightDeadline(5*time.Minute))
	if !errors.Is(err, planctl.ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("an admission whose context ended: %v", err)
	}
	h, err := db.History(ctx, "pf")
	must(t, err)
	if len(h.Runs) != 1 {
		t.Fatalf("something was admitted: %s", h.Raw)
	}
	// The handle works on.
	_, err = db.Status(ctx, "pf")
	must(t, err)
}
