package main

import (
	"go/importer"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// replaySource is a package with a changed function (Fee, lines 3-5), a caller of it through
// an unexported helper (Total), a direct caller (Double) and an unrelated function (Name).
const replaySource = `package p

func Fee(n int) int {
	return n + 1
}

func charge(n int) int { return Fee(n) * 2 }

// Total is the total.
func Total(n int) int { return charge(n) }

func Double(n int) int { return Fee(n) * 2 }

func Name(s string) (string, error) { return s, nil }

type Box struct{ N int }

func (b *Box) Grow() { b.N++ }
`

// replayModule loads replaySource as the module example.com/p.
func replayModule(t *testing.T) (*Module, *Pkg) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(replaySource), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Module{Root: dir, Path: "example.com/p", Fset: token.NewFileSet(), Imports: map[string]string{},
		Req: &Request{}}
	for _, p := range harnessImports {
		m.Imports[filepath.Base(p)] = p
	}
	pkg, err := m.check("", listed{ImportPath: "example.com/p", Name: "p", Dir: dir, GoFiles: []string{"p.go"}},
		importer.Default())
	if err != nil {
		t.Fatal(err)
	}
	m.Pkgs = append(m.Pkgs, pkg)
	m.collect(pkg, nil)
	return m, pkg
}

func callableNamed(m *Module, name string) *Callable {
	for _, c := range m.Callables {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestAimAtFindsChangedFunctionsAndTheirCallers(t *testing.T) {
	m, _ := replayModule(t)
	aim := aimAt(m, map[string][]int{"p.go": {4}})
	var got []string
	for _, c := range m.Callables {
		if aim[c] {
			got = append(got, c.Name)
		}
	}
	if want := []string{"Fee", "Total", "Double"}; !reflect.DeepEqual(got, want) {
		t.Errorf("aimed at %v, want %v", got, want)
	}
	if len(aimAt(m, nil)) != 0 {
		t.Errorf("no change aims at nothing")
	}
	// A changed doc comment counts as the function's.
	if aim := aimAt(m, map[string][]int{"p.go": {9}}); !aim[callableNamed(m, "Total")] || aim[callableNamed(m, "Fee")] {
		t.Errorf("a doc comment's line aims at its function only: %v", aim)
	}
}

func TestReplayNameIsTheFunctionAndThePlace(t *testing.T) {
	for _, c := range []struct {
		function string
		index    int
		want     string
	}{
		{"pricing.TotalPrice", 0, "TestReplay_TotalPrice_1"},
		{"pricing.Basket.Add", 2, "TestReplay_Basket_Add_3"},
		{"", 4, "TestReplay_Call_5"},
	} {
		if got := replayName(c.function, c.index); got != c.want {
			t.Errorf("replayName(%q, %d) = %q, want %q", c.function, c.index, got, c.want)
		}
	}
}

func TestClipCutsOnACharacter(t *testing.T) {
	if got := clip("héllo", 2); got != "h…" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip = %q", got)
	}
}

func TestOutcomeKeyLeavesAddressesOut(t *testing.T) {
	a := &Outcome{Results: [][]Obs{{{Go: "&p.T{X:(*int)(0xc000012345)}", Text: "&{0xc000012345}"}}}}
	b := &Outcome{Results: [][]Obs{{{Go: "&p.T{X:(*int)(0xc000099999)}", Text: "&{0xc000099999}"}}}}
	c := &Outcome{Results: [][]Obs{{{Go: "3", Text: "3"}}}}
	if outcomeKey(a) != outcomeKey(b) {
		t.Errorf("two addresses make two outcomes")
	}
	if outcomeKey(a) == outcomeKey(c) {
		t.Errorf("two values make one outcome")
	}
}

func TestShownAndRaised(t *testing.T) {
	m, pkg := replayModule(t)
	c := &Candidate{Pkg: pkg, Steps: []Step{{C: callableNamed(m, "Name"), Args: []Value{{Expr: `""`}}}}}
	msg := "empty name"
	failed := &Outcome{Results: [][]Obs{{{Go: `""`, Text: ""}, {Go: "&errors.errorString{s:\"empty name\"}", ErrText: &msg}}}}
	if got := shownOf(c, failed); got != `returns ("", error "empty name")` {
		t.Errorf("shown = %q", got)
	}
	if !raisedIn(c, failed) {
		t.Errorf("an error is raised")
	}
	boom := "runtime error: index out of range [0] with length 0"
	panicked := &Outcome{Panic: &boom}
	if got := shownOf(c, panicked); got != "panics: "+boom || !raisedIn(c, panicked) {
		t.Errorf("shown = %q", got)
	}
}

func TestReplayBodyIsWhatHappened(t *testing.T) {
	m, pkg := replayModule(t)
	r := &Renderer{m: m, pkg: pkg, vals: newValues(m, pkg), work: "/nowhere"}
	c := &Candidate{Pkg: pkg, Steps: []Step{{C: callableNamed(m, "Fee"), Args: []Value{{Expr: "2"}}}}}
	body := func(o *Outcome) string {
		b, ok := r.replayBody(c, o)
		if !ok || !parses(b) {
			t.Fatalf("no body for %+v: %q", o, b)
		}
		return b
	}
	three := &Outcome{Results: [][]Obs{{{Go: "3", Text: "3"}}}}
	four := &Outcome{Results: [][]Obs{{{Go: "4", Text: "4"}}}}
	if body(three) != body(&Outcome{Results: [][]Obs{{{Go: "3", Text: "3"}}}}) {
		t.Errorf("one behaviour, two bodies")
	}
	if body(three) == body(four) {
		t.Errorf("two behaviours, one body")
	}
	boom := "boom"
	if b := body(&Outcome{Panic: &boom}); !strings.Contains(b, `fmt.Sprint(r) != "boom"`) {
		t.Errorf("a panic's body checks its message: %s", b)
	}
	grow := &Candidate{Pkg: pkg, Recv: &Value{Expr: "&p.Box{}"}, Steps: []Step{{C: callableNamed(m, "Box.Grow")}}}
	left := &Outcome{Results: [][]Obs{{}}, Post: []Obs{{Go: "&p.Box{N:1}", Text: "&{1}"}}}
	if b, ok := r.replayBody(grow, left); !ok || !strings.Contains(b, "p.Box{N:1}") {
		t.Errorf("a call with no results is judged by its receiver: %s", b)
	}
}

func TestBodiesInAreTheFormattedLines(t *testing.T) {
	src := "package p_test\n\nfunc TestA(t *testing.T) {\n\tif x {\n\t\ty()\n\t}\n}\n\nfunc TestB(t *testing.T) {\n\tz()\n}\n"
	got := bodiesIn(src)
	want := map[string][]string{"TestA": {"if x {", "\ty()", "}"}, "TestB": {"z()"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bodies = %q, want %q", got, want)
	}
}

func TestFloatCheckOfANegativeLiteralIsGo(t *testing.T) {
	text := check(&column{compare: "float"}, "got", "-1.5", "F()")
	if _, err := parser.ParseExpr(strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(text, "\n", 2)[0], "if "), " {")); err != nil {
		t.Errorf("%s: %v", text, err)
	}
}
