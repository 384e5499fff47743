"""Python's own view of a file's definitions, for the symbol oracle eval.

Reads file paths (one a line) on stdin, writes one JSON object a line:
{"path", "defs": [{"q", "name", "kind", "start", "end"}], "comments": [[start, end]]}
or {"path", "error"} when Python cannot parse the file. Definitions are
every def, async def and class at any depth, qualified by the definitions
around them (a property's getter is of kind 'get', its setter 'set');
start is the first decorator's line, end the last line of the body.
Comments are those standing on their own lines (from tokenize, so a '#'
inside a string is not one); a shebang on line 1 is not a comment.
"""
import ast
import io
import json
import sys
import tokenize


def accessor_kind(node):
    """'get' for a property's getter (@property, @cached_property), 'set' for its setter (@x.setter)."""
    for d in node.decorator_list:
        if isinstance(d, ast.Name) and d.id in ("property", "cached_property"):
            return "get"
        if isinstance(d, ast.Attribute) and d.attr in ("property", "cached_property") and isinstance(d.value, ast.Name):
            return "get"
        if isinstance(d, ast.Attribute) and d.attr == "setter" and isinstance(d.value, ast.Name) and d.value.id == node.name:
            return "set"
    return None


def definitions(tree):
    out = []

    def visit(node, scope, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                q = scope + [child.name]
                if isinstance(child, ast.ClassDef):
                    kind = "class"
                else:
                    kind = accessor_kind(child) or ("method" if in_class else "function")
                out.append({"q": ".".join(q), "name": child.name, "kind": kind, "start": start, "end": child.end_lineno})
                visit(child, q, isinstance(child, ast.ClassDef))
            else:
                visit(child, scope, in_class)

    visit(tree, [], False)
    return out


def own_line_comments(text):
    lines = text.split("\n")
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.COMMENT:
            continue
        row, col = tok.start
        if row == 1 and tok.string.startswith("#!"):
            continue
        if lines[row - 1][:col].strip() == "":
            out.append([row, row])
    return out


for raw in sys.stdin:
    path = raw.rstrip("\n")
    if not path:
        continue
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        tree = ast.parse(text, filename=path)
        result = {"path": path, "defs": definitions(tree), "comments": own_line_comments(text)}
    except (SyntaxError, UnicodeDecodeError, tokenize.TokenError, ValueError) as e:
        result = {"path": path, "error": str(e)}
    sys.stdout.write(json.dumps(result) + "\n")
