package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the module's root directory, from this package's.
const root = "../.."

// TestEveryExportedIdentifierDocumented parses every non-test Go file of
// the module and fails for a package without a package comment and for an
// exported function, method (of an exported type), type, constant or
// variable without a doc comment. A constant or variable is documented by
// the comment of its group, its own, or a line comment after it.
func TestEveryExportedIdentifierDocumented(t *testing.T) {
	var missing []string
	fset := token.NewFileSet()
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range dirs {
		missing = append(missing, checkDir(t, fset, dir)...)
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
	if len(dirs) < 10 {
		t.Fatalf("found only %d package directories under %s: is the root right?", len(dirs), root)
	}
}

// checkDir returns the undocumented identifiers of the package in dir.
func checkDir(t *testing.T, fset *token.FileSet, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, dir)
	var out []string
	hasPkgDoc := false
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			hasPkgDoc = true
		}
		at := func(n ast.Node, what string) {
			p := fset.Position(n.Pos())
			out = append(out, filepath.Join(rel, name)+":"+strconv.Itoa(p.Line)+": "+what+" has no doc comment")
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc != nil {
					continue
				}
				if d.Recv != nil {
					recv := receiverName(d.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue
					}
					at(d, "method "+recv+"."+d.Name.Name)
				} else {
					at(d, "func "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
							at(s, "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						if d.Doc != nil || s.Doc != nil || s.Comment != nil {
							continue
						}
						for _, n := range s.Names {
							if n.IsExported() {
								at(n, d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	if !hasPkgDoc {
		out = append(out, rel+": package has no package comment")
	}
	return out
}

// receiverName returns the type name of a method's receiver.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
