package planctl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"planctl.dev/planctl"
)

// A definition with a task kind of the program's own, an engine that
// runs its executor, an instance created, and its status read back.
func Example() {
	dir, err := os.MkdirTemp("", "planctl-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "example.db") // or postgresql://...
	ctx := context.Background()

	db, err := planctl.Open(ctx, uri)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	// The kind must be known to the handle that applies the definition.
	if err := db.RegisterKind(ctx, "Greet"); err != nil {
		panic(err)
	}
	def := `{"name": "hello", "version": "1",
	  "parameters": [{"name": "WHO", "default": "world"}],
	  "tasks": [{"name": "greet", "kind": "Greet", "spec": {}}],
	  "plans": {"deploy": {"phases": [{"name": "main",
	    "steps": [{"name": "greet", "tasks": ["greet"]}]}]}}}`
	if _, err := db.ApplyDefinition(ctx, []byte(def), "hello.json"); err != nil {
		panic(err)
	}

	// The engine has a handle of its own; it stops once nothing is left.
	engine, err := planctl.NewEngine(ctx, uri, planctl.WithUntilIdle(), planctl.WithNoShell())
	if err != nil {
		panic(err)
	}
	defer engine.Close()
	err = engine.Register("Greet", func(ctx context.Context, t *planctl.Task) (planctl.Result, error) {
		var p struct{ WHO string }
		if err := json.Unmarshal(t.Params, &p); err != nil {
			return planctl.Result{}, planctl.Fatal(err) // retrying cannot help
		}
		return planctl.Result{Message: "said hello to " + p.WHO}, nil
	})
	if err != nil {
		panic(err)
	}

	a, err := db.Create(ctx, "hello", "hello", planctl.Params{"WHO": "Go"})
	if err != nil {
		panic(err)
	}
	fmt.Println("admitted:", a.Plan, "run", a.Run, a.Status)
	if err := engine.Run(ctx); err != nil {
		panic(err)
	}

	st, err := db.Status(ctx, "hello")
	if err != nil {
		panic(err)
	}
	run := st.Plan("deploy").Run
	fmt.Println("ended:", run.Plan, run.Status, "-", *run.Phases[0].Steps[0].Message)

	_, err = db.Status(ctx, "nosuch")
	fmt.Println("not found:", errors.Is(err, planctl.ErrNotFound))
	// Output:
	// admitted: deploy run 1 PENDING
	// ended: deploy COMPLETE - said hello to Go
	// not found: true
}
