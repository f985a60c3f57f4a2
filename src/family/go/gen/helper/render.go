package main

// Rendering: the kept candidates of a source file become its test file, gofmt-formatted.
// L1 is one table-driven TestXxx per function or method (`tests := []struct{…}` and t.Run,
// gotests' layout); L2 is one TestType_Sequences per type, a subtest per sequence of calls;
// a code defect is a TestXxx_CodeDefect that skips with the evidence; a broken example is
// TestExampleXxx, its body capturing what it prints.

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Row is one case of a table, or one sequence of a sequences test.
type Row struct {
	Name string
	K    *Kept
}

// TestFunc is one test function of a generated file.
type TestFunc struct {
	Name    string
	Kind    string // "table", "sequences", "defect", "example"
	C       *Callable
	Type    *types.Named
	Rows    []*Row
	Defect  *Defect
	Example *ExampleFailure
}

// TestFile is one generated file: the tests of one source file.
type TestFile struct {
	Pkg    *Pkg
	Source string // module-relative source file
	Name   string
	Funcs  []*TestFunc
}

// Renderer writes one package's files.
type Renderer struct {
	m    *Module
	pkg  *Pkg
	vals *Values
	work string
}

var addressRe = regexp.MustCompile(`0x[0-9a-f]{6,}`)

// literal is an observed value as a Go expression a test can compare with, if it is one.
func (r *Renderer) literal(o Obs, nilable bool) (string, bool) {
	g := o.Go
	if o.IsNil || g == "<nil>" {
		return "nil", nilable
	}
	switch g {
	case "NaN":
		return "math.NaN()", true
	case "+Inf":
		return "math.Inf(1)", true
	case "-Inf":
		return "math.Inf(-1)", true
	}
	if len(g) > 400 || r.unstable(g) {
		return "", false
	}
	e, err := parser.ParseExpr(g)
	if err != nil {
		return "", false
	}
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if n.Name == "NaN" || n.Name == "Inf" {
				ok = false
			}
		case *ast.SelectorExpr:
			id, isIdent := n.X.(*ast.Ident)
			if !n.Sel.IsExported() || !isIdent {
				ok = false
			} else if path, known := r.m.Imports[id.Name]; !known ||
				(id.Name == r.pkg.Name && r.pkg.Alias != r.pkg.Name) || path == "" {
				ok = false
			}
			return false
		case *ast.KeyValueExpr:
			if id, isIdent := n.Key.(*ast.Ident); isIdent && !id.IsExported() &&
				id.Name != "true" && id.Name != "false" {
				ok = false
			}
		case *ast.CallExpr:
			if p, isParen := n.Fun.(*ast.ParenExpr); isParen {
				switch p.X.(type) {
				case *ast.StarExpr, *ast.FuncType, *ast.ChanType:
					ok = false
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.IMAG {
				ok = false
			}
		}
		return ok
	})
	return g, ok
}

// unstable says whether a printed value holds an address or the run's temporary folders.
func (r *Renderer) unstable(s string) bool {
	return addressRe.MatchString(s) || strings.Contains(s, r.work) || strings.Contains(s, "TestTTProbe") ||
		strings.Contains(s, "/tmp/")
}

// text is an observed value's %v, if it is stable.
func (r *Renderer) text(o Obs) (string, bool) {
	if len(o.Text) > 300 || r.unstable(o.Text) || o.IsNil {
		return "", false
	}
	return strconv.Quote(o.Text), true
}

func nilable(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map, *types.Interface, *types.Signature, *types.Chan:
		return true
	}
	return false
}

// column is one expected value of a table: a result or a value after the call.
type column struct {
	field   string
	typ     string
	mode    string // "literal" or "text"
	compare string // "eq", "float", "deep"
	vals    map[*Row]string
	label   string // what the failure message calls it
	got     string // the variable it compares
}

// compareOf is how a column of type t compares.
func compareOf(t types.Type) string {
	b, ok := t.Underlying().(*types.Basic)
	if !ok {
		return "deep"
	}
	if b.Info()&types.IsFloat != 0 {
		return "float"
	}
	return "eq"
}

// pickColumn decides a column's mode over the rows that need it; rows it cannot assert are
// returned as dropped.
func (r *Renderer) pickColumn(field, label, got string, t types.Type, rows []*Row, obs func(*Row) (Obs, bool)) (*column, map[*Row]bool) {
	lits, texts := map[*Row]string{}, map[*Row]string{}
	need := 0
	for _, row := range rows {
		o, needed := obs(row)
		if !needed {
			continue
		}
		need++
		if l, ok := r.literal(o, nilable(t)); ok {
			lits[row] = l
		}
		if tx, ok := r.text(o); ok {
			texts[row] = tx
		}
	}
	dropped := map[*Row]bool{}
	if need == 0 {
		return nil, dropped
	}
	col := &column{field: field, label: label, got: got}
	switch {
	case len(lits) == need || (len(lits) >= len(texts) && len(lits) > 0):
		col.mode, col.vals, col.typ, col.compare = "literal", lits, r.vals.typeString(t), compareOf(t)
	case len(texts) > 0:
		col.mode, col.vals, col.typ, col.compare = "text", texts, "string", "text"
	default:
		return nil, dropped
	}
	for _, row := range rows {
		if _, needed := obs(row); needed {
			if _, ok := col.vals[row]; !ok {
				dropped[row] = true
			}
		}
	}
	return col, dropped
}

// argNames are the args struct's field names for a callable's parameters.
func argNames(sig *types.Signature) []string {
	names := make([]string, sig.Params().Len())
	seen := map[string]bool{"name": true}
	for i := range names {
		n := sig.Params().At(i).Name()
		if n == "" || n == "_" || seen[n] {
			n = fmt.Sprintf("arg%d", i)
		}
		seen[n] = true
		names[i] = n
	}
	return names
}

// table renders one function's or method's table test; "" when no row asserts anything.
func (r *Renderer) table(f *TestFunc) string {
	c := f.C
	sig := c.Sig
	res := sig.Results()
	hasErr := res.Len() > 0 && isError(res.At(res.Len()-1).Type())
	nvals := res.Len()
	if hasErr {
		nvals--
	}
	rows := f.Rows
	isPanic := func(row *Row) bool { return row.K.O.Panic != nil }
	isErrRow := func(row *Row) bool {
		return hasErr && len(row.K.O.Results) > 0 && len(row.K.O.Results[0]) == res.Len() &&
			row.K.O.Results[0][res.Len()-1].ErrText != nil
	}
	var cols []*column
	gotNames := make([]string, res.Len())
	dropped := map[*Row]bool{}
	for k := 0; k < nvals; k++ {
		k := k
		field, got := "want", "got"
		if k > 0 {
			field, got = fmt.Sprintf("want%d", k), fmt.Sprintf("got%d", k)
		}
		col, drop := r.pickColumn(field, "", got, res.At(k).Type(), rows, func(row *Row) (Obs, bool) {
			if isPanic(row) || isErrRow(row) || len(row.K.O.Results) == 0 || len(row.K.O.Results[0]) <= k {
				return Obs{}, false
			}
			return row.K.O.Results[0][k], true
		})
		for d := range drop {
			dropped[d] = true
		}
		if col != nil {
			cols = append(cols, col)
			gotNames[k] = got
		} else {
			gotNames[k] = "_"
		}
	}
	if hasErr {
		gotNames[res.Len()-1] = "err"
	}
	// A call with no results is judged by what it leaves: its slices, maps and pointers, or
	// its receiver.
	names := argNames(sig)
	var posts []*column
	if res.Len() == 0 {
		idx := 0
		for j := 0; j < sig.Params().Len(); j++ {
			if !mutable(sig.Params().At(j).Type()) {
				continue
			}
			i := idx
			idx++
			field := "want" + strings.ToUpper(names[j][:1]) + names[j][1:]
			col, drop := r.pickColumn(field, names[j], "tt.args."+names[j], sig.Params().At(j).Type(), rows, func(row *Row) (Obs, bool) {
				if isPanic(row) || i >= len(row.K.O.Post) || row.K.C.Steps[0].Args[j].Nil {
					return Obs{}, false
				}
				return row.K.O.Post[i], true
			})
			for d := range drop {
				dropped[d] = true
			}
			if col != nil {
				posts = append(posts, col)
			}
		}
		if c.Recv != nil {
			col, drop := r.pickColumn("wantRecv", "receiver", "tt.recv", sig.Recv().Type(), rows, func(row *Row) (Obs, bool) {
				if isPanic(row) || len(row.K.O.Post) == 0 {
					return Obs{}, false
				}
				return row.K.O.Post[len(row.K.O.Post)-1], true
			})
			for d := range drop {
				dropped[d] = true
			}
			if col != nil {
				posts = append(posts, col)
			}
		}
	}
	var kept []*Row
	for _, row := range rows {
		if !dropped[row] {
			kept = append(kept, row)
		}
	}
	anyPanic, anyErrText := false, false
	errTexts := map[*Row]string{}
	for _, row := range kept {
		anyPanic = anyPanic || isPanic(row)
		if isErrRow(row) {
			if t := *row.K.O.Results[0][res.Len()-1].ErrText; !r.unstable(t) && len(t) < 300 {
				errTexts[row] = strconv.Quote(t)
				anyErrText = true
			}
		}
	}
	if len(kept) == 0 || (len(cols) == 0 && len(posts) == 0 && !anyPanic && !hasErr) {
		return ""
	}
	f.Rows = kept
	var b strings.Builder
	fmt.Fprintf(&b, "func %s(t *testing.T) {\n", f.Name)
	if usesTemp(kept) {
		b.WriteString("dir := t.TempDir()\n")
	}
	if len(names) > 0 {
		b.WriteString("type args struct {\n")
		for j, n := range names {
			fmt.Fprintf(&b, "%s %s\n", n, r.vals.typeString(sig.Params().At(j).Type()))
		}
		b.WriteString("}\n")
	}
	b.WriteString("tests := []struct {\nname string\n")
	if c.Recv != nil {
		fmt.Fprintf(&b, "recv %s\n", r.vals.typeString(sig.Recv().Type()))
	}
	if len(names) > 0 {
		b.WriteString("args args\n")
	}
	for _, col := range append(append([]*column{}, cols...), posts...) {
		fmt.Fprintf(&b, "%s %s\n", col.field, col.typ)
	}
	if hasErr {
		b.WriteString("wantErr bool\n")
		if anyErrText {
			b.WriteString("wantErrText string\n")
		}
	}
	if anyPanic {
		b.WriteString("wantPanic bool\n")
	}
	b.WriteString("}{\n")
	for _, row := range kept {
		st := row.K.C.Steps[0]
		fmt.Fprintf(&b, "{\nname: %s,\n", strconv.Quote(row.Name))
		if c.Recv != nil {
			fmt.Fprintf(&b, "recv: %s,\n", row.K.C.Recv.Expr)
		}
		if len(names) > 0 {
			parts := make([]string, len(names))
			for j, n := range names {
				parts[j] = n + ": " + st.Args[j].Expr
			}
			fmt.Fprintf(&b, "args: args{%s},\n", strings.Join(parts, ", "))
		}
		for _, col := range append(append([]*column{}, cols...), posts...) {
			if v, ok := col.vals[row]; ok {
				fmt.Fprintf(&b, "%s: %s,\n", col.field, v)
			}
		}
		if isErrRow(row) {
			b.WriteString("wantErr: true,\n")
			if t, ok := errTexts[row]; ok {
				fmt.Fprintf(&b, "wantErrText: %s,\n", t)
			}
		}
		if isPanic(row) {
			b.WriteString("wantPanic: true,\n")
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\nfor _, tt := range tests {\nt.Run(tt.name, func(t *testing.T) {\n")
	label := c.Func.Name() + "()"
	if anyPanic {
		fmt.Fprintf(&b, "defer func() {\nif r := recover(); (r != nil) != tt.wantPanic {\nt.Errorf(\"%s panic = %%v, wantPanic %%v\", r, tt.wantPanic)\n}\n}()\n", label)
	}
	callArgs := make([]string, len(names))
	for j, n := range names {
		callArgs[j] = "tt.args." + n
		if sig.Variadic() && j == len(names)-1 {
			callArgs[j] += "..."
		}
	}
	target := r.pkg.Alias + "." + c.Name
	if c.Recv != nil {
		target = "tt.recv." + c.Func.Name()
	}
	call := target + "(" + strings.Join(callArgs, ", ") + ")"
	allUnderscore := true
	for _, g := range gotNames {
		allUnderscore = allUnderscore && g == "_"
	}
	if res.Len() == 0 || allUnderscore {
		b.WriteString(call + "\n")
	} else {
		fmt.Fprintf(&b, "%s := %s\n", strings.Join(gotNames, ", "), call)
	}
	if hasErr {
		fmt.Fprintf(&b, "if (err != nil) != tt.wantErr {\nt.Fatalf(\"%s error = %%v, wantErr %%v\", err, tt.wantErr)\n}\n", label)
		b.WriteString("if err != nil {\n")
		if anyErrText {
			fmt.Fprintf(&b, "if tt.wantErrText != \"\" && err.Error() != tt.wantErrText {\nt.Errorf(\"%s error = %%q, want %%q\", err.Error(), tt.wantErrText)\n}\n", label)
		}
		b.WriteString("return\n}\n")
	}
	for _, col := range cols {
		b.WriteString(check(col, col.got, "tt."+col.field, label))
	}
	for _, col := range posts {
		b.WriteString(check(col, col.got, "tt."+col.field, label+" left "+col.label))
	}
	b.WriteString("})\n}\n}\n\n")
	return b.String()
}

// check is the comparison of one column.
func check(col *column, got, want, label string) string {
	cond := ""
	switch {
	case col.compare == "eq" && want == "true":
		cond = "!" + got
	case col.compare == "eq" && want == "false":
		cond = got
	case col.compare == "eq":
		cond = got + " != " + want
	case col.compare == "float":
		// Equal, both NaN, or within a relative 1e-9 (a fused multiply-add on another CPU
		// rounds once less). A negative literal is subtracted in parentheses (not `got--1.5`).
		sub := want
		if strings.HasPrefix(want, "-") {
			sub = "(" + want + ")"
		}
		cond = fmt.Sprintf("%[1]s != %[2]s && !(math.IsNaN(float64(%[1]s)) && math.IsNaN(float64(%[2]s))) && "+
			"!(math.Abs(float64(%[1]s-%[3]s)) <= 1e-9*math.Max(1, math.Abs(float64(%[2]s))))", got, want, sub)
	case col.compare == "text":
		cond = "fmt.Sprint(" + got + ") != " + want
		got = "fmt.Sprint(" + got + ")"
	default:
		cond = "!reflect.DeepEqual(" + got + ", " + want + ")"
	}
	verb := "%#v"
	if col.compare == "text" {
		verb = "%q"
	}
	return fmt.Sprintf("if %s {\nt.Errorf(\"%s = %s, want %s\", %s, %s)\n}\n", cond, label, verb, verb, got, want)
}

func usesTemp(rows []*Row) bool {
	for _, row := range rows {
		if row.K.C.Recv != nil && row.K.C.Recv.Temp {
			return true
		}
		for _, st := range row.K.C.Steps {
			for _, a := range st.Args {
				if a.Temp {
					return true
				}
			}
		}
	}
	return false
}

// sequences renders a type's L2 test: each sequence of calls with what each call returned.
func (r *Renderer) sequences(f *TestFunc) string {
	var subs []string
	var kept []*Row
	for _, row := range f.Rows {
		if body := r.sequence(row); body != "" {
			subs = append(subs, fmt.Sprintf("t.Run(%s, func(t *testing.T) {\n%s})\n", strconv.Quote(row.Name), body))
			kept = append(kept, row)
		}
	}
	f.Rows = kept
	if len(subs) == 0 {
		return ""
	}
	return fmt.Sprintf("func %s(t *testing.T) {\n%s}\n\n", f.Name, strings.Join(subs, ""))
}

func (r *Renderer) sequence(row *Row) string {
	c, o := row.K.C, row.K.O
	var b strings.Builder
	if usesTemp([]*Row{row}) {
		b.WriteString("dir := t.TempDir()\n")
	}
	fmt.Fprintf(&b, "%s\n", recvDecl(r.m, r.pkg, c))
	asserted := 0
	for i, st := range c.Steps {
		var obs []Obs
		if i < len(o.Results) {
			obs = o.Results[i]
		}
		text, n := r.stepText("v."+st.C.Func.Name()+"("+joinArgs(st.C.Sig, st.Args)+")", st.C, obs)
		b.WriteString(text)
		asserted += n
	}
	if asserted == 0 {
		return ""
	}
	return b.String()
}

// stepText is one call with the checks of what it returned (obs, as observed); n is how many
// of its results it asserts.
func (r *Renderer) stepText(call string, fn *Callable, obs []Obs) (string, int) {
	res := fn.Sig.Results()
	if res.Len() == 0 || len(obs) != res.Len() {
		return call + "\n", 0
	}
	names := make([]string, res.Len())
	var checks []string
	asserted := 0
	label := fn.Func.Name() + "()"
	for k := 0; k < res.Len(); k++ {
		if k == res.Len()-1 && isError(res.At(k).Type()) {
			names[k] = "err"
			checks = append([]string{r.errCheck(obs[k], label)}, checks...)
			asserted++
			continue
		}
		got := "got"
		if k > 0 {
			got = fmt.Sprintf("got%d", k)
		}
		if ch, ok := r.valueCheck(obs[k], res.At(k).Type(), got, label); ok {
			checks = append(checks, ch)
			asserted++
		} else {
			got = "_"
		}
		names[k] = got
	}
	if len(checks) == 0 {
		return call + "\n", 0
	}
	if len(names) == 1 && len(checks) == 1 && strings.HasPrefix(checks[0], "if ") && names[0] != "err" {
		// One result, one check: `if got := v.Len(); got != 1 {`.
		return fmt.Sprintf("if %s := %s; %s", names[0], call, strings.TrimPrefix(checks[0], "if ")), asserted
	}
	return fmt.Sprintf("{\n%s := %s\n%s}\n", strings.Join(names, ", "), call, strings.Join(checks, "")), asserted
}

// errCheck asserts a call's error: none, or one with the text observed.
func (r *Renderer) errCheck(obs Obs, label string) string {
	if obs.ErrText == nil {
		return fmt.Sprintf("if err != nil {\nt.Fatalf(\"%s error = %%v\", err)\n}\n", label)
	}
	ch := fmt.Sprintf("if err == nil {\nt.Fatalf(\"%s: want an error\")\n}\n", label)
	if !r.unstable(*obs.ErrText) {
		ch += fmt.Sprintf("if err.Error() != %s {\nt.Errorf(\"%s error = %%q, want %%q\", err.Error(), %s)\n}\n",
			strconv.Quote(*obs.ErrText), label, strconv.Quote(*obs.ErrText))
	}
	return ch
}

// valueCheck compares the variable got, of type t, with the value observed: its literal, or
// its text; false when neither is stable.
func (r *Renderer) valueCheck(obs Obs, t types.Type, got, label string) (string, bool) {
	col := &column{compare: compareOf(t)}
	want, ok := r.literal(obs, nilable(t))
	switch {
	case ok && want == "nil" && col.compare == "deep":
		return fmt.Sprintf("if %s != nil {\nt.Errorf(\"%s = %%v, want nil\", %s)\n}\n", got, label, got), true
	case ok:
		return check(col, got, want, label), true
	}
	if tx, ok := r.text(obs); ok {
		col.compare = "text"
		return check(col, got, tx, label), true
	}
	return "", false
}

// defectFunc renders a code defect: the call that panics, skipped with the evidence.
func (r *Renderer) defectFunc(f *TestFunc, check bool) string {
	d := f.Defect
	var b strings.Builder
	fmt.Fprintf(&b, "func %s(t *testing.T) {\n", f.Name)
	if !check {
		fmt.Fprintf(&b, "t.Skip(%s)\n", strconv.Quote("code_defect: "+d.Evidence))
	}
	row := &Row{K: &Kept{C: d.C, O: d.O}}
	if usesTemp([]*Row{row}) {
		b.WriteString("dir := t.TempDir()\n")
	}
	if d.C.Recv != nil {
		fmt.Fprintf(&b, "%s\n", recvDecl(r.m, r.pkg, d.C))
	}
	last := min(d.O.Step, len(d.C.Steps)-1)
	for _, st := range d.C.Steps[:last+1] {
		args := make([]string, len(st.Args))
		for j, a := range st.Args {
			args[j] = a.Expr
			if st.C.Sig.Variadic() && j == len(st.Args)-1 {
				args[j] += "..."
			}
		}
		fmt.Fprintf(&b, "%s(%s)\n", callee(r.pkg, st.C), strings.Join(args, ", "))
	}
	b.WriteString("}\n\n")
	return b.String()
}

// exampleFunc renders a broken example: its body, its printing captured and compared.
func (r *Renderer) exampleFunc(f *TestFunc, check bool) string {
	body, ok := exampleBody(r.m, f.Example)
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "func %s(t *testing.T) {\n", f.Name)
	if !check {
		ev := fmt.Sprintf("code_defect: %s's // Output: no longer holds: it prints %q, the comment says %q",
			f.Example.Example.Name, f.Example.Got, f.Example.Want)
		fmt.Fprintf(&b, "t.Skip(%s)\n", strconv.Quote(ev))
	}
	b.WriteString("var out bytes.Buffer\n")
	b.WriteString(body)
	fmt.Fprintf(&b, "if got, want := strings.TrimSpace(out.String()), %s; got != want {\nt.Errorf(\"%s printed %%q, want %%q\", got, want)\n}\n}\n\n",
		strconv.Quote(f.Example.Want), f.Example.Example.Name)
	return b.String()
}

// renderFile is a file's text; check leaves the skips out (the check run must see the defects
// fail). Functions with nothing to assert are removed from the file.
func (r *Renderer) renderFile(tf *TestFile, check bool) string {
	var body strings.Builder
	var kept []*TestFunc
	for _, f := range tf.Funcs {
		text := ""
		switch f.Kind {
		case "table":
			text = r.table(f)
		case "sequences":
			text = r.sequences(f)
		case "defect":
			text = r.defectFunc(f, check)
		case "example":
			text = r.exampleFunc(f, check)
		}
		if text != "" {
			body.WriteString(text)
			kept = append(kept, f)
		}
	}
	tf.Funcs = kept
	if len(kept) == 0 {
		return ""
	}
	head := fmt.Sprintf("%s// Code generated by team-testing from %s. DO NOT EDIT.\n\npackage %s_test\n\nimport (\n\"testing\"\n)\n\n",
		buildLine(r.pkg.Files[tf.Source]), filepath.Base(tf.Source), r.pkg.Name)
	src := withGroupedImports(r.m, head+body.String())
	if formatted, err := format.Source([]byte(src)); err == nil {
		return string(formatted)
	}
	return src
}

// buildLine is a source file's `//go:build` constraint, for its tests to carry ("" if none).
func buildLine(f *ast.File) string {
	if f == nil {
		return ""
	}
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build ") {
				return c.Text + "\n\n"
			}
		}
	}
	return ""
}

// Place is where a function or a row sits in a rendered file.
type Place struct {
	Func string
	Row  string
}

// locate maps a rendered file's lines to its functions and rows.
func locate(src string) map[int]Place {
	out := map[int]Place{}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		return out
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		from, to := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		for l := from; l <= to; l++ {
			out[l] = Place{Func: name}
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			var rowName string
			switch n := n.(type) {
			case *ast.CompositeLit:
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "name" {
							if lit, ok := kv.Value.(*ast.BasicLit); ok {
								rowName, _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" && len(n.Args) == 2 {
					if lit, ok := n.Args[0].(*ast.BasicLit); ok {
						rowName, _ = strconv.Unquote(lit.Value)
					}
				}
			}
			if rowName != "" {
				for l := fset.Position(n.Pos()).Line; l <= fset.Position(n.End()).Line; l++ {
					out[l] = Place{Func: name, Row: rowName}
				}
			}
			return true
		})
	}
	return out
}

// rowName is a case's name from its inputs' tags, unique within its test.
func rowName(k *Kept, used map[string]bool) string {
	var tags []string
	if k.C.Recv != nil && len(k.C.Steps) == 1 {
		tags = append(tags, k.C.Recv.Tag)
	}
	if len(k.C.Steps) > 1 {
		for _, st := range k.C.Steps {
			tags = append(tags, st.C.Func.Name())
		}
	} else {
		for _, a := range k.C.Steps[0].Args {
			tags = append(tags, a.Tag)
		}
	}
	name := strings.Trim(strings.Join(tags, "_"), "_")
	if len(name) > 48 {
		name = name[:48]
	}
	if name == "" {
		name = "call"
	}
	if k.O.Panic != nil {
		name += "_panics"
	}
	base := name
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	used[name] = true
	return name
}

// sortFuncs keeps a file's functions in the source's order.
func sortFuncs(funcs []*TestFunc) {
	sort.SliceStable(funcs, func(i, j int) bool {
		li, lj := funcLine(funcs[i]), funcLine(funcs[j])
		return li < lj
	})
}

func funcLine(f *TestFunc) int {
	switch {
	case f.C != nil:
		return f.C.Line
	case f.Defect != nil:
		return f.Defect.C.Steps[0].C.Line
	}
	return 1 << 30
}
