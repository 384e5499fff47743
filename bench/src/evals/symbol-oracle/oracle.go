// Go's own view of a file's definitions, for the symbol oracle eval.
//
// Reads file paths (one a line) on stdin, writes one JSON object a line:
// {"path", "defs": [{"q", "name", "kind", "start", "end"}], "comments": [[start, end]]}
// or {"path", "error"}. Definitions are func declarations (methods
// qualified by their receiver's type) and type specs at any depth (a type
// declared in a function body is qualified by the function). A type
// declaration holding one spec spans the whole `type X …`; in a group
// `type ( … )` each spec spans itself. Comments are those standing on
// their own lines.
package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

type def struct {
	Q     string `json:"q"`
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

type result struct {
	Path     string   `json:"path"`
	Defs     []def    `json:"defs"`
	Comments [][2]int `json:"comments"`
	Error    string   `json:"error,omitempty"`
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.IndexListExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.ParenExpr:
		return receiverName(t.X)
	}
	return ""
}

func typeKind(t ast.Expr) string {
	switch t.(type) {
	case *ast.StructType:
		return "struct"
	case *ast.InterfaceType:
		return "interface"
	}
	return "type"
}

func analyse(path string) result {
	src, err := os.ReadFile(path)
	if err != nil {
		return result{Path: path, Error: err.Error()}
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return result{Path: path, Error: err.Error()}
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	// The last line holding a node's text (End is the position after it).
	endLine := func(n ast.Node) int { return fset.Position(n.End() - 1).Line }
	res := result{Path: path, Defs: []def{}, Comments: [][2]int{}}
	var visit func(n ast.Node, scope []string)
	visit = func(n ast.Node, scope []string) {
		ast.Inspect(n, func(c ast.Node) bool {
			if c == n {
				return true
			}
			switch d := c.(type) {
			case *ast.FuncDecl:
				q := append(append([]string{}, scope...), d.Name.Name)
				kind := "function"
				if d.Recv != nil && len(d.Recv.List) > 0 {
					kind = "method"
					if r := receiverName(d.Recv.List[0].Type); r != "" {
						q = append(append([]string{}, scope...), r, d.Name.Name)
					}
				}
				res.Defs = append(res.Defs, def{strings.Join(q, "."), d.Name.Name, kind, line(d.Pos()), endLine(d)})
				if d.Body != nil {
					visit(d.Body, q)
				}
				return false
			case *ast.GenDecl:
				if d.Tok != token.TYPE {
					return true
				}
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					var span ast.Node = ts
					if !d.Lparen.IsValid() {
						span = d
					}
					q := append(append([]string{}, scope...), ts.Name.Name)
					res.Defs = append(res.Defs, def{strings.Join(q, "."), ts.Name.Name, typeKind(ts.Type), line(span.Pos()), endLine(span)})
				}
				return false
			}
			return true
		})
	}
	visit(file, nil)
	lines := strings.Split(string(src), "\n")
	for _, g := range file.Comments {
		for _, c := range g.List {
			p := fset.Position(c.Pos())
			e := fset.Position(c.End())
			before := lines[p.Line-1][:p.Column-1]
			after := strings.TrimSpace(lines[e.Line-1][e.Column-1:])
			if strings.TrimSpace(before) == "" && (after == "" || strings.HasPrefix(after, "//") || strings.HasPrefix(after, "/*")) {
				res.Comments = append(res.Comments, [2]int{p.Line, e.Line})
			}
		}
	}
	return res
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		if p := in.Text(); p != "" {
			_ = enc.Encode(analyse(p))
		}
	}
}
