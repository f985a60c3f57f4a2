package main

// The packages' own examples: go test runs every Example with an `// Output:` comment; one
// whose output no longer holds is a code defect. Its test is the example's body with what it
// printed captured and compared with the output it states.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/printer"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"time"
)

// testEvent is one line of go test -json about a test.
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// eachEvent calls f with every event of go test -json output that is about a test.
func eachEvent(out []byte, f func(testEvent)) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e testEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Test != "" {
			f(e)
		}
	}
}

// checkExamples runs the packages' examples once.
func (s *Search) checkExamples() {
	var args []string
	byPkg := map[string]*Pkg{}
	for _, pkg := range s.m.Pkgs {
		if len(pkg.Examples) > 0 {
			args = append(args, "./"+pkg.Dir)
			byPkg[pkg.ImportPath] = pkg
		}
	}
	if len(args) == 0 {
		return
	}
	out, _, _ := goCmd(s.req, 3*time.Minute, append([]string{"test", "-json", "-count=1", "-run", "^Example"}, args...)...)
	outputs := map[string]*strings.Builder{}
	failed := map[string]bool{}
	eachEvent(out, func(e testEvent) {
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "output":
			if outputs[key] == nil {
				outputs[key] = &strings.Builder{}
			}
			outputs[key].WriteString(e.Output)
		case "fail":
			failed[key] = true
		}
	})
	var keys []string
	for k := range failed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		parts := strings.SplitN(key, "\x00", 2)
		pkg := byPkg[parts[0]]
		if pkg == nil {
			continue
		}
		var ex *Example
		for _, e := range pkg.Examples {
			if e.Name == parts[1] {
				ex = e
			}
		}
		if ex == nil || outputs[key] == nil {
			continue
		}
		got, want, ok := gotWant(outputs[key].String())
		if !ok {
			continue
		}
		f := &ExampleFailure{Pkg: pkg, Example: ex, Got: got, Want: want, Function: documented(pkg, ex.Name)}
		s.examples = append(s.examples, f)
	}
}

// gotWant reads go's report of a failing example: "got:\n…\nwant:\n…\n".
func gotWant(output string) (string, string, bool) {
	i := strings.Index(output, "got:\n")
	j := strings.Index(output, "\nwant:\n")
	if i < 0 || j < i {
		return "", "", false
	}
	got := output[i+len("got:\n") : j]
	want := output[j+len("\nwant:\n"):]
	// go's own lines follow the stated output.
	if k := strings.Index(want, "\n--- "); k >= 0 {
		want = want[:k]
	}
	if k := strings.Index(want, "\nFAIL"); k >= 0 {
		want = want[:k]
	}
	return strings.TrimSpace(got), strings.TrimSpace(want), true
}

// documented is what an example documents: ExampleSpread -> Spread, ExampleStack_Push ->
// Stack.Push, Example -> the package.
func documented(pkg *Pkg, name string) string {
	rest := strings.TrimPrefix(name, "Example")
	if rest == "" || strings.HasPrefix(rest, "_") {
		return pkg.Alias
	}
	parts := strings.Split(rest, "_")
	if len(parts) > 1 && parts[1] != "" && strings.ToUpper(parts[1][:1]) == parts[1][:1] {
		return pkg.Alias + "." + parts[0] + "." + parts[1]
	}
	return pkg.Alias + "." + parts[0]
}

// exampleBody is the example's statements with fmt.Print* writing into `out`, and the imports
// they use; ok is false when it cannot be carried into the generated file.
func exampleBody(m *Module, f *ExampleFailure) (string, bool) {
	if f.body == nil {
		body, ok := makeExampleBody(m, f)
		if !ok {
			body = ""
		}
		f.body = &body
	}
	return *f.body, *f.body != ""
}

func makeExampleBody(m *Module, f *ExampleFailure) (string, bool) {
	ex := f.Example
	if !ex.External {
		return "", false
	}
	names := map[string]string{}
	for _, imp := range ex.FileAST.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	usesOut := false
	ast.Inspect(ex.Decl.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] == "fmt" {
			switch sel.Sel.Name {
			case "Print", "Println", "Printf":
				sel.Sel.Name = "Fp" + strings.TrimPrefix(sel.Sel.Name, "P")
				call.Args = append([]ast.Expr{&ast.UnaryExpr{Op: token.AND, X: ast.NewIdent("out")}}, call.Args...)
				usesOut = true
			}
		}
		return true
	})
	if !usesOut {
		return "", false
	}
	for name, path := range names {
		if known, taken := m.Imports[name]; taken && known != path {
			return "", false
		}
		m.Imports[name] = path
	}
	var b bytes.Buffer
	for _, st := range ex.Decl.Body.List {
		if err := printer.Fprint(&b, m.Fset, st); err != nil {
			return "", false
		}
		b.WriteString("\n")
	}
	return b.String(), true
}
