package main

// Calls for a replay: each module's result lists the calls the search ran on its file (the
// kept ones its tests hold, and, when the request names a change, those of the functions the
// change touched and of their callers), each with a native form the replay rebuilds it from
// on another version of the module: the package, every step's function by name and its
// arguments as Go expressions. Nothing in it points into this run's model.

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// Call is one call the search ran, as a reader sees it and as a replay rebuilds it.
type Call struct {
	Function   string   `json:"function"`
	Statements []string `json:"statements"`
	Expr       string   `json:"expr"`
	Test       *string  `json:"test"`
	// A NativeCall; kept raw so that one unreadable call does not spoil a replay's request.
	Native json.RawMessage `json:"native"`
}

// NativeCall is what the replay needs to make the same call again.
type NativeCall struct {
	// The package's import path, its module-relative folder, its name and the qualifier the
	// expressions use for it.
	Pkg   string `json:"pkg"`
	Dir   string `json:"dir"`
	Name  string `json:"name"`
	Alias string `json:"alias"`
	// The value methods are called on (`v`), if any.
	Recv  *Value       `json:"recv"`
	Steps []NativeStep `json:"steps"`
	// The import path of every other qualifier the expressions use.
	Imports map[string]string `json:"imports"`
}

// NativeStep is one call of a candidate: a function, or a method of the package's type Type.
type NativeStep struct {
	Type string  `json:"type,omitempty"`
	Func string  `json:"func"`
	Args []Value `json:"args"`
}

// maxReplayCalls bounds the calls listed per touched function beyond the kept ones.
const maxReplayCalls = 24

// functionName is a callable as a reader names it: "pricing.TotalPrice", "pricing.Basket.Add".
func functionName(c *Callable) string { return c.Pkg.Name + "." + c.Name }

// stepCall is one step as Go source: pkg.F(args) or v.M(args).
func stepCall(pkg *Pkg, st Step) string {
	return callee(pkg, st.C) + "(" + joinArgs(st.C.Sig, st.Args) + ")"
}

// tempIn says whether the receiver or the first n steps' arguments name the test's folder.
func tempIn(c *Candidate, n int) bool {
	if c.Recv != nil && c.Recv.Temp {
		return true
	}
	for _, st := range c.Steps[:n] {
		for _, a := range st.Args {
			if a.Temp {
				return true
			}
		}
	}
	return false
}

// callSource is a candidate as setup statements and the expression of its last call.
func callSource(m *Module, c *Candidate) ([]string, string) {
	stmts := []string{}
	if tempIn(c, len(c.Steps)) {
		stmts = append(stmts, "dir := t.TempDir()")
	}
	if c.Recv != nil {
		stmts = append(stmts, recvDecl(m, c.Pkg, c))
	}
	for _, st := range c.Steps[:len(c.Steps)-1] {
		stmts = append(stmts, stepCall(c.Pkg, st))
	}
	return stmts, stepCall(c.Pkg, c.Steps[len(c.Steps)-1])
}

// nativeOf is a candidate's native form.
func nativeOf(m *Module, c *Candidate) NativeCall {
	n := NativeCall{Pkg: c.Pkg.ImportPath, Dir: c.Pkg.Dir, Name: c.Pkg.Name, Alias: c.Pkg.Alias,
		Recv: c.Recv, Steps: []NativeStep{}}
	var exprs []string
	if c.Recv != nil {
		exprs = append(exprs, c.Recv.Expr)
	}
	for _, st := range c.Steps {
		step := NativeStep{Func: st.C.Func.Name(), Args: append([]Value{}, st.Args...)}
		if st.C.Recv != nil {
			step.Type = st.C.Recv.Obj().Name()
		}
		for _, a := range st.Args {
			exprs = append(exprs, a.Expr)
		}
		n.Steps = append(n.Steps, step)
	}
	n.Imports = exprImports(m, exprs)
	return n
}

// exprImports are the import paths of the qualifiers Go expressions use.
func exprImports(m *Module, exprs []string) map[string]string {
	out := map[string]string{}
	for _, e := range exprs {
		x, err := parser.ParseExpr(e)
		if err != nil {
			continue
		}
		ast.Inspect(x, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, known := m.Imports[id.Name]; known {
					out[id.Name] = path
				}
			}
			return true
		})
	}
	return out
}

// callOf is a candidate as a listed call.
func callOf(m *Module, c *Candidate, test *string) Call {
	stmts, expr := callSource(m, c)
	native, _ := json.Marshal(nativeOf(m, c))
	return Call{Function: functionName(c.Steps[len(c.Steps)-1].C), Statements: stmts, Expr: expr,
		Test: test, Native: native}
}

// callsFor are the calls listed for a source file: the rows its delivered tests hold (tf,
// nil when none), then what the touched functions declared in it ran, each call once.
func (s *Search) callsFor(file string, tf *TestFile) []Call {
	calls := []Call{}
	seen := map[string]bool{}
	add := func(c *Candidate, test *string) {
		call := callOf(s.m, c, test)
		key := strings.Join(append(append([]string{}, call.Statements...), call.Expr), "\n")
		if !seen[key] {
			seen[key] = true
			calls = append(calls, call)
		}
	}
	if tf != nil {
		for _, f := range tf.Funcs {
			if f.Kind != "table" && f.Kind != "sequences" {
				continue
			}
			for _, r := range f.Rows {
				test := f.Name + "/" + r.Name
				add(r.K.C, &test)
			}
		}
	}
	for _, fn := range s.m.Callables {
		if fn.File != file {
			continue
		}
		for _, c := range s.ran[fn] {
			if !s.usesBanned(c) {
				add(c, nil)
			}
		}
	}
	return calls
}

// usesBanned says whether a candidate calls a callable found to have effects since it ran.
func (s *Search) usesBanned(c *Candidate) bool {
	for _, st := range c.Steps {
		if s.banned[st.C] {
			return true
		}
	}
	return false
}

// noteRan records a touched function's candidate that returned or panicked in the call (not
// in making its values), once per call text.
func (s *Search) noteRan(c *Candidate, o *Outcome) {
	last := c.Steps[len(c.Steps)-1].C
	if !s.aim[last] || len(s.ran[last]) >= maxReplayCalls || (o.Panic != nil && o.Step < 0) || s.tmpInObs(o) {
		return
	}
	stmts, expr := callSource(s.m, c)
	key := strings.Join(append(stmts, expr), "\n")
	if s.ranText[key] {
		return
	}
	s.ranText[key] = true
	s.ran[last] = append(s.ran[last], c)
	s.grewAt[last] = s.gen
}

// wantsMore says whether a touched function should get candidates in a later generation
// although its lines are covered: it has not yet run the calls a replay lists, it has inputs
// to vary, and the generation before added a call.
func (s *Search) wantsMore(c *Callable) bool {
	if !s.aim[c] || len(s.ran[c]) >= maxReplayCalls || (c.Sig.Params().Len() == 0 && c.Recv == nil) {
		return false
	}
	grew, ok := s.grewAt[c]
	return ok && grew >= s.gen-1
}

// aimAt is the callables a change touched (a changed line in their declaration or its doc
// comment) and their callers (a call in their body to a touched function of the package,
// directly or through the package's unexported functions).
func aimAt(m *Module, changed map[string][]int) map[*Callable]bool {
	aim := map[*Callable]bool{}
	if len(changed) == 0 {
		return aim
	}
	for _, pkg := range m.Pkgs {
		touched, calls, exported := pkgCalls(m, pkg, changed)
		affected := map[token.Pos]bool{}
		for p := range touched {
			affected[p] = true
		}
		// Unexported functions that call an affected one are affected: their exported
		// callers reach the change through them.
		for grew := true; grew; {
			grew = false
			for fn, callees := range calls {
				if !affected[fn] && !exported[fn] && anyIn(callees, affected) {
					affected[fn], grew = true, true
				}
			}
		}
		for _, c := range m.Callables {
			if c.Pkg != pkg {
				continue
			}
			if p := c.Func.Pos(); touched[p] || anyIn(calls[p], affected) {
				aim[c] = true
			}
		}
	}
	return aim
}

func anyIn(list []token.Pos, set map[token.Pos]bool) bool {
	for _, p := range list {
		if set[p] {
			return true
		}
	}
	return false
}

// pkgCalls reads a package's functions, keyed by their name's position: those a changed line
// falls in, the package's functions each one calls, and which are exported.
func pkgCalls(m *Module, pkg *Pkg, changed map[string][]int) (map[token.Pos]bool, map[token.Pos][]token.Pos, map[token.Pos]bool) {
	touched, calls, exported := map[token.Pos]bool{}, map[token.Pos][]token.Pos{}, map[token.Pos]bool{}
	var files []string
	for rel := range pkg.Files {
		files = append(files, rel)
	}
	sort.Strings(files)
	for _, rel := range files {
		for _, d := range pkg.Files[rel].Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			key := fd.Name.Pos()
			exported[key] = fd.Name.IsExported()
			first, last := m.Fset.Position(fd.Pos()).Line, m.Fset.Position(fd.End()).Line
			if fd.Doc != nil {
				first = m.Fset.Position(fd.Doc.Pos()).Line
			}
			for _, line := range changed[rel] {
				if line >= first && line <= last {
					touched[key] = true
				}
			}
			calls[key] = calledIn(pkg, fd.Body)
		}
	}
	return touched, calls, exported
}

// calledIn are the positions of the package's own functions and methods a body calls.
func calledIn(pkg *Pkg, body *ast.BlockStmt) []token.Pos {
	var out []token.Pos
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var id *ast.Ident
		switch f := unparen(call.Fun).(type) {
		case *ast.Ident:
			id = f
		case *ast.SelectorExpr:
			id = f.Sel
		case *ast.IndexExpr: // a generic function instantiated: F[int](x)
			if x, ok := f.X.(*ast.Ident); ok {
				id = x
			}
		}
		if id == nil {
			return true
		}
		if fn, ok := pkg.Info.Uses[id].(*types.Func); ok && fn.Pkg() == pkg.Types {
			out = append(out, fn.Pos())
		}
		return true
	})
	return out
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}
