package main

// Loading: `go list -export -deps` gives every dependency's export data, the packages under
// test are parsed and type-checked from source, and what the tests can call is listed:
// exported functions, methods of exported types, constructors, constants by type, literals
// and the packages' own examples.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// foreignImports are the direct imports of every package outside the standard library that
// the packages under test depend on: what a call into one of them may reach.
var foreignImports = map[string][]string{}

// Module is the module under test as the search sees it.
type Module struct {
	Root      string
	Path      string
	Fset      *token.FileSet
	Pkgs      []*Pkg
	Callables []*Callable
	LeftOut   []string
	// Import path of every package name the generated code may use as a qualifier.
	Imports map[string]string
	Req     *Request
}

// Pkg is one package under test.
type Pkg struct {
	Dir        string // relative to the module root, "" for the root
	AbsDir     string
	ImportPath string
	Name       string
	// The name the external test package imports it as.
	Alias   string
	Files   map[string]*ast.File // module-relative path -> syntax
	Types   *types.Package
	Info    *types.Info
	Strings []string
	Ints    []string
	Floats  []string
	// Exported constants of each named type ("stats.Mode" -> ["stats.Median", …]).
	Consts map[string][]string
	// Constructors of each named type of the package.
	Makers map[*types.TypeName][]*Callable
	// Names of the Test functions its own test files declare.
	Existing map[string]bool
	Examples []*Example
	// Files of the package that declare only tests the generator wrote earlier.
	Ours map[string]bool
}

// Callable is an exported function or method.
type Callable struct {
	Pkg  *Pkg
	Name string // "Mean", "Stack.Push"
	Func *types.Func
	Sig  *types.Signature
	Recv *types.Named
	File string // module-relative
	Doc  string
	// The doc comment says it panics.
	Panics    bool
	Line, End int
	// It writes files (only with a path parameter it is called at all).
	WritesFiles bool
	// Its results make a value of one of the package's types (a constructor).
	Makes *types.TypeName
}

// Example is one of the package's own Example functions with an `// Output:` comment.
type Example struct {
	Name     string
	File     string
	External bool // declared in package <name>_test
	Decl     *ast.FuncDecl
	FileAST  *ast.File
}

// listed is one package as `go list -json` prints it.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	Export     string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Standard   bool
	Error      *struct{ Err string }
}

// harnessImports are the standard packages the probe and the delivered tests use.
var harnessImports = []string{
	"bytes", "context", "encoding/json", "errors", "fmt", "io", "math", "os", "path/filepath",
	"reflect", "runtime", "runtime/debug", "sort", "strings", "testing", "time",
}

// goPlaces are go's caches as they were when the helper started (GOCACHE=…, GOMODCACHE=…,
// GOPATH=…): a run with a home of its own still builds with them, and writes nothing there.
var goPlaces []string

// findGoPlaces fixes go's caches before any run moves HOME.
func findGoPlaces(req *Request) {
	out, _, err := goCmd(req, time.Minute, "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH")
	if err != nil {
		return
	}
	var places map[string]string
	if json.Unmarshal(out, &places) == nil {
		for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
			if places[k] != "" {
				goPlaces = append(goPlaces, k+"="+places[k])
			}
		}
	}
}

func goCmd(req *Request, timeout time.Duration, args ...string) ([]byte, []byte, error) {
	return goCmdEnv(req, timeout, nil, args...)
}

// goCmdEnv runs go with extra environment; its build files go to a folder of the helper's own
// (GOTMPDIR), never the temporary folder candidates are watched in.
func goCmdEnv(req *Request, timeout time.Duration, env []string, args ...string) ([]byte, []byte, error) {
	cmd := exec.Command(req.Go, args...)
	gotmp := filepath.Join(req.Work, "gotmp")
	_ = os.MkdirAll(gotmp, 0o755)
	cmd.Env = append(append(append(os.Environ(), "GOTMPDIR="+gotmp), goPlaces...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return stdout.Bytes(), stderr.Bytes(), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return stdout.Bytes(), stderr.Bytes(), fmt.Errorf("%s %s: no answer within %s",
			req.Go, strings.Join(args, " "), timeout)
	}
}

func load(req *Request) (*Module, error) {
	root, _ := os.Getwd()
	m := &Module{Root: root, Path: req.ModulePath, Fset: token.NewFileSet(), Req: req,
		Imports: map[string]string{}}
	for _, p := range harnessImports {
		m.Imports[filepath.Base(p)] = p
	}
	findGoPlaces(req)
	files := map[string][]ModuleRef{}
	var dirs []string
	for _, r := range req.Modules {
		dir := filepath.ToSlash(filepath.Dir(r.File))
		if dir == "." {
			dir = ""
		}
		if _, ok := files[dir]; !ok {
			dirs = append(dirs, dir)
		}
		files[dir] = append(files[dir], r)
	}
	sort.Strings(dirs)
	args := []string{"list", "-e", "-json", "-export", "-deps"}
	for _, d := range dirs {
		args = append(args, "./"+d)
	}
	args = append(args, harnessImports...)
	out, stderr, err := goCmd(req, 5*time.Minute, args...)
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("go list failed: %v: %s", err, tail(string(stderr), 800))
	}
	exports := exportFiles
	byDir := map[string]listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list printed what is not JSON: %v", err)
		}
		if p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
		if !p.Standard {
			foreignImports[p.ImportPath] = p.Imports
		}
		if rel, err := filepath.Rel(root, p.Dir); err == nil && !p.Standard &&
			!strings.HasPrefix(rel, "..") {
			rel = filepath.ToSlash(rel)
			if rel == "." {
				rel = ""
			}
			byDir[rel] = p
		}
	}
	imp := m.importer()
	for _, d := range dirs {
		p, ok := byDir[d]
		switch {
		case !ok:
			m.LeftOut = append(m.LeftOut, fmt.Sprintf("%s: not a package go list knows", d))
			continue
		case p.Error != nil:
			m.LeftOut = append(m.LeftOut, fmt.Sprintf("%s: %s", p.ImportPath, p.Error.Err))
			continue
		case p.Name == "main":
			m.LeftOut = append(m.LeftOut, fmt.Sprintf("%s: a command (package main)", p.ImportPath))
			continue
		case len(p.CgoFiles) > 0:
			m.LeftOut = append(m.LeftOut, fmt.Sprintf("%s: uses cgo", p.ImportPath))
			continue
		}
		pkg, err := m.check(d, p, imp)
		if err != nil {
			m.LeftOut = append(m.LeftOut, fmt.Sprintf("%s: %v", p.ImportPath, err))
			continue
		}
		m.Pkgs = append(m.Pkgs, pkg)
		wanted := map[string]bool{}
		for _, r := range files[d] {
			wanted[r.File] = true
		}
		if req.everyFile {
			// A replay finds a function that moved to another file of its package.
			wanted = nil
		}
		m.collect(pkg, wanted)
	}
	return m, nil
}

// check parses and type-checks one package from source, its imports from export data.
func (m *Module) check(dir string, p listed, imp types.Importer) (*Pkg, error) {
	pkg := &Pkg{Dir: dir, AbsDir: p.Dir, ImportPath: p.ImportPath, Name: p.Name,
		Files: map[string]*ast.File{}, Consts: map[string][]string{},
		Makers: map[*types.TypeName][]*Callable{}, Existing: map[string]bool{}, Ours: map[string]bool{}}
	pkg.Alias = p.Name
	if _, clash := m.Imports[p.Name]; clash || p.Name == "tt" {
		pkg.Alias = p.Name + "pkg"
	}
	var parsed []*ast.File
	for _, name := range p.GoFiles {
		rel := filepath.ToSlash(filepath.Join(dir, name))
		f, err := parser.ParseFile(m.Fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		pkg.Files[rel] = f
		parsed = append(parsed, f)
	}
	pkg.Info = &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Defs:  map[*ast.Ident]types.Object{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	var firstErr error
	conf := types.Config{Importer: imp, Error: func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}}
	tp, _ := conf.Check(p.ImportPath, m.Fset, parsed, pkg.Info)
	if firstErr != nil {
		return nil, fmt.Errorf("does not type-check: %v", firstErr)
	}
	pkg.Types = tp
	m.Imports[pkg.Alias] = p.ImportPath
	m.readTests(pkg)
	return pkg, nil
}

// readTests reads the package's own test files: the Test names they take, and their examples.
func (m *Module) readTests(pkg *Pkg) {
	entries, _ := os.ReadDir(pkg.AbsDir)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, "_test.go") || e.IsDir() {
			continue
		}
		if isGeneratedName(name) {
			pkg.Ours[name] = true
			continue
		}
		f, err := parser.ParseFile(m.Fset, filepath.Join(pkg.AbsDir, name), nil, parser.ParseComments)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			n := fd.Name.Name
			pkg.Existing[n] = true
			if strings.HasPrefix(n, "Example") && fd.Type.Params.NumFields() == 0 && hasOutput(f, fd) {
				pkg.Examples = append(pkg.Examples, &Example{Name: n,
					File: filepath.ToSlash(filepath.Join(pkg.Dir, name)), External: f.Name.Name != pkg.Name,
					Decl: fd, FileAST: f})
			}
		}
	}
}

// isGeneratedName says whether a test file is one this generator delivers.
func isGeneratedName(name string) bool {
	return strings.Contains(name, "_tt_") && strings.HasSuffix(name, "_test.go")
}

// hasOutput says whether an example ends with an `// Output:` comment (go test runs only those).
func hasOutput(f *ast.File, fd *ast.FuncDecl) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > fd.Body.Lbrace && cg.End() <= fd.Body.Rbrace {
			text := strings.TrimSpace(cg.Text())
			if strings.HasPrefix(text, "Output:") || strings.HasPrefix(text, "Unordered output:") {
				return true
			}
		}
	}
	return false
}

// collect lists a package's callables, constructors, constants and literals; the callables
// of the wanted files (every file's when wanted is nil) are the ones the tests call.
func (m *Module) collect(pkg *Pkg, wanted map[string]bool) {
	names := make([]string, 0, len(pkg.Files))
	for rel := range pkg.Files {
		names = append(names, rel)
	}
	sort.Strings(names)
	effects := fileEffects(pkg)
	for _, rel := range names {
		f := pkg.Files[rel]
		m.literals(pkg, f)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				m.constants(pkg, d)
			case *ast.FuncDecl:
				if c := m.callable(pkg, rel, d, effects); c != nil {
					if c.Makes != nil {
						pkg.Makers[c.Makes] = append(pkg.Makers[c.Makes], c)
					}
					if wanted == nil || wanted[rel] {
						m.Callables = append(m.Callables, c)
					}
				}
			}
		}
	}
}

func (m *Module) callable(pkg *Pkg, rel string, d *ast.FuncDecl, effects map[types.Object]effect) *Callable {
	if !d.Name.IsExported() || d.Body == nil {
		return nil
	}
	fn, ok := pkg.Info.Defs[d.Name].(*types.Func)
	if !ok {
		return nil
	}
	sig := fn.Type().(*types.Signature)
	c := &Callable{Pkg: pkg, Name: d.Name.Name, Func: fn, Sig: sig, File: rel, Doc: d.Doc.Text(),
		Line: m.Fset.Position(d.Pos()).Line, End: m.Fset.Position(d.End()).Line}
	c.Panics = strings.Contains(strings.ToLower(c.Doc), "panic")
	where := pkg.Alias + "." + c.Name
	if recv := sig.Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		named, ok := t.(*types.Named)
		if !ok || !named.Obj().Exported() {
			return nil
		}
		if named.TypeParams().Len() > 0 {
			m.LeftOut = append(m.LeftOut, fmt.Sprintf("%s.%s: a method of a generic type", pkg.Alias, named.Obj().Name()+"."+c.Name))
			return nil
		}
		c.Recv = named
		c.Name = named.Obj().Name() + "." + c.Name
		where = pkg.Alias + "." + c.Name
	}
	if sig.TypeParams().Len() > 0 {
		m.LeftOut = append(m.LeftOut, where+": generic")
		return nil
	}
	switch effects[fn] {
	case effectHard:
		m.LeftOut = append(m.LeftOut, where+": reaches the environment (processes, the network, "+
			"environment variables or exit)")
		return nil
	case effectFiles:
		if !hasPathParam(sig) {
			m.LeftOut = append(m.LeftOut, where+": writes files at paths it does not take")
			return nil
		}
		c.WritesFiles = true
	}
	if c.Recv == nil && !takesErrorOrOwn(sig) {
		c.Makes = madeType(pkg, sig)
	}
	return c
}

// madeType is the package's type a function constructs: its first result is T or *T, the
// second (if any) an error.
func madeType(pkg *Pkg, sig *types.Signature) *types.TypeName {
	res := sig.Results()
	if res.Len() == 0 || res.Len() > 2 || (res.Len() == 2 && !isError(res.At(1).Type())) {
		return nil
	}
	t := res.At(0).Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() != pkg.Types || !named.Obj().Exported() || named.TypeParams().Len() > 0 {
		return nil
	}
	if _, isIface := named.Underlying().(*types.Interface); isIface {
		return nil
	}
	return named.Obj()
}

// takesErrorOrOwn says whether a function takes an error or a value of the type it returns:
// Must(v, err) and With(v, …) are not constructors to make values with.
func takesErrorOrOwn(sig *types.Signature) bool {
	res := sig.Results()
	for i := 0; i < sig.Params().Len(); i++ {
		t := sig.Params().At(i).Type()
		if isError(t) || (res.Len() > 0 && types.Identical(t, res.At(0).Type())) {
			return true
		}
	}
	return false
}

// typeNamed is the package's type a type string names ("stats.Point"), if it is one.
func (m *Module) typeNamed(ts string, pkg *Pkg) (*types.TypeName, bool) {
	name := strings.TrimPrefix(ts, pkg.Alias+".")
	if name == ts {
		return nil, false
	}
	obj, ok := pkg.Types.Scope().Lookup(name).(*types.TypeName)
	return obj, ok
}

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// hasPathParam says whether a function takes a string named like a path, which its tests
// point into their temporary folder.
func hasPathParam(sig *types.Signature) bool {
	for i := 0; i < sig.Params().Len(); i++ {
		if isPathParam(sig.Params().At(i)) {
			return true
		}
	}
	return false
}

func isPathParam(v *types.Var) bool {
	b, ok := v.Type().Underlying().(*types.Basic)
	if !ok || b.Kind() != types.String {
		return false
	}
	n := strings.ToLower(v.Name())
	for _, w := range []string{"path", "file", "dir", "folder"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// constants records the exported constants of the package's named types.
func (m *Module) constants(pkg *Pkg, d *ast.GenDecl) {
	if d.Tok != token.CONST {
		return
	}
	for _, spec := range d.Specs {
		vs := spec.(*ast.ValueSpec)
		for _, name := range vs.Names {
			c, ok := pkg.Info.Defs[name].(*types.Const)
			if !ok || !name.IsExported() {
				continue
			}
			if named, ok := c.Type().(*types.Named); ok && named.Obj().Pkg() == pkg.Types {
				key := pkg.Alias + "." + named.Obj().Name()
				if len(pkg.Consts[key]) < 8 {
					pkg.Consts[key] = append(pkg.Consts[key], pkg.Alias+"."+name.Name)
				}
			}
		}
	}
}

// literals records a file's string and number literals (the values its branches compare with).
func (m *Module) literals(pkg *Pkg, f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		if _, isImport := n.(*ast.ImportSpec); isImport {
			return false
		}
		lit, ok := n.(*ast.BasicLit)
		if !ok {
			return true
		}
		switch lit.Kind {
		case token.STRING:
			s, err := strconv.Unquote(lit.Value)
			if err == nil && len(s) <= 40 && !strings.Contains(s, "%") && len(pkg.Strings) < 16 {
				pkg.Strings = addUnique(pkg.Strings, strconv.Quote(s))
			}
		case token.INT:
			if v, err := strconv.ParseInt(lit.Value, 0, 64); err == nil && v > 2 && v < 1<<31 && len(pkg.Ints) < 12 {
				pkg.Ints = addUnique(pkg.Ints, strconv.FormatInt(v, 10))
				pkg.Ints = addUnique(pkg.Ints, strconv.FormatInt(v+1, 10))
			}
		case token.FLOAT:
			if _, err := strconv.ParseFloat(lit.Value, 64); err == nil && len(pkg.Floats) < 8 {
				pkg.Floats = addUnique(pkg.Floats, lit.Value)
			}
		}
		return true
	})
}

func addUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
