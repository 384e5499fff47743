// Java's own view of a file's definitions (javac's com.sun.source trees),
// for the symbol oracle eval. Run with the JDK's source launcher:
// `java Oracle.java < paths`.
//
// Reads file paths (one a line) on stdin, writes one JSON object a line:
// {"path", "defs": [{"q", "name", "kind", "start", "end"}], "comments": [[start, end]]}
// or {"path", "error"}. Definitions are named classes, interfaces, enums,
// records and annotation types, methods and constructors (a constructor is
// named after its class), at any depth: a local class is qualified by the
// method around it, and a method of an anonymous class by the named
// definitions around it. Annotation-type elements are not definitions.
// start is the first annotation or modifier, end the last line. Comments
// standing on their own lines come from a small lexer (javac's trees drop
// comments other than Javadoc).

import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import javax.lang.model.element.Modifier;
import javax.tools.*;

public class Oracle {
  record Def(String q, String name, String kind, long start, long end) {}

  static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  /** Own-line comments: [startLine, endLine] pairs. */
  static List<long[]> comments(String text) {
    List<long[]> out = new ArrayList<>();
    int n = text.length();
    int i = 0;
    while (i < n) {
      char c = text.charAt(i);
      if (c == '"' && text.startsWith("\"\"\"", i)) {
        int j = i + 3;
        while (j < n && !text.startsWith("\"\"\"", j)) j += text.charAt(j) == '\\' ? 2 : 1;
        i = j + 3;
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (j < n && text.charAt(j) != c && text.charAt(j) != '\n') j += text.charAt(j) == '\\' ? 2 : 1;
        i = j + 1;
      } else if (c == '/' && i + 1 < n && (text.charAt(i + 1) == '/' || text.charAt(i + 1) == '*')) {
        int end = text.charAt(i + 1) == '/' ? text.indexOf('\n', i) : text.indexOf("*/", i + 2);
        end = end < 0 ? n : text.charAt(i + 1) == '/' ? end : end + 2;
        int lineStart = text.lastIndexOf('\n', i - 1) + 1;
        int lineEnd = text.indexOf('\n', end);
        String before = text.substring(lineStart, i);
        String after = text.substring(end, lineEnd < 0 ? n : lineEnd).strip();
        if (before.isBlank() && (after.isEmpty() || after.startsWith("//") || after.startsWith("/*"))) {
          out.add(new long[] {lineOf(text, i), lineOf(text, Math.max(i, end - 1))});
        }
        i = end;
      } else i++;
    }
    return out;
  }

  static long lineOf(String text, int offset) {
    long line = 1;
    for (int k = 0; k < offset; k++) if (text.charAt(k) == '\n') line++;
    return line;
  }

  public static void main(String[] args) throws Exception {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    for (String path; (path = in.readLine()) != null; ) {
      if (path.isEmpty()) continue;
      try {
        out.println(analyse(javac, path));
      } catch (Exception e) {
        out.println("{\"path\":" + json(path) + ",\"error\":" + json(String.valueOf(e)) + "}");
      }
    }
    out.flush();
  }

  static String analyse(JavaCompiler javac, String path) throws IOException {
    String text = Files.readString(Path.of(path), StandardCharsets.UTF_8);
    JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///" + path.replace('\\', '/')), JavaFileObject.Kind.SOURCE) {
      @Override
      public CharSequence getCharContent(boolean ignoreEncodingErrors) {
        return text;
      }
    };
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    JavacTask task = (JavacTask) javac.getTask(null, null, diagnostics, List.of("-proc:none"), null, List.of(file));
    CompilationUnitTree unit = task.parse().iterator().next();
    for (Diagnostic<?> d : diagnostics.getDiagnostics()) {
      if (d.getKind() == Diagnostic.Kind.ERROR) return "{\"path\":" + json(path) + ",\"error\":" + json(d.getMessage(null)) + "}";
    }
    SourcePositions pos = Trees.instance(task).getSourcePositions();
    LineMap lines = unit.getLineMap();
    List<Def> defs = new ArrayList<>();
    Deque<String> scope = new ArrayDeque<>();
    Deque<Tree.Kind> classKinds = new ArrayDeque<>();
    new TreeScanner<Void, Void>() {
      Def def(Tree t, String name, String kind) {
        String q = scope.isEmpty() ? name : String.join(".", scope) + "." + name;
        long start = lines.getLineNumber(pos.getStartPosition(unit, t));
        long end = lines.getLineNumber(pos.getEndPosition(unit, t) - 1);
        Def d = new Def(q, name, kind, start, end);
        defs.add(d);
        return d;
      }

      @Override
      public Void visitClass(ClassTree t, Void v) {
        String name = t.getSimpleName().toString();
        classKinds.push(t.getKind());
        try {
          if (name.isEmpty()) return super.visitClass(t, v);
          String kind = switch (t.getKind()) {
            case INTERFACE, ANNOTATION_TYPE -> "interface";
            case ENUM -> "enum";
            default -> "class";
          };
          def(t, name, kind);
          scope.addLast(name);
          try {
            return super.visitClass(t, v);
          } finally {
            scope.removeLast();
          }
        } finally {
          classKinds.pop();
        }
      }

      @Override
      public Void visitMethod(MethodTree t, Void v) {
        if (classKinds.peek() == Tree.Kind.ANNOTATION_TYPE) return super.visitMethod(t, v);
        String name = t.getName().toString();
        boolean ctor = name.equals("<init>");
        if (ctor) name = scope.isEmpty() ? name : scope.peekLast();
        def(t, name, ctor ? "constructor" : "method");
        scope.addLast(name);
        try {
          return super.visitMethod(t, v);
        } finally {
          scope.removeLast();
        }
      }
    }.scan(unit, null);
    StringBuilder b = new StringBuilder("{\"path\":").append(json(path)).append(",\"defs\":[");
    for (int i = 0; i < defs.size(); i++) {
      Def d = defs.get(i);
      if (i > 0) b.append(',');
      b.append("{\"q\":").append(json(d.q())).append(",\"name\":").append(json(d.name())).append(",\"kind\":").append(json(d.kind()));
      b.append(",\"start\":").append(d.start()).append(",\"end\":").append(d.end()).append('}');
    }
    b.append("],\"comments\":[");
    List<long[]> cs = comments(text);
    for (int i = 0; i < cs.size(); i++) b.append(i > 0 ? "," : "").append('[').append(cs.get(i)[0]).append(',').append(cs.get(i)[1]).append(']');
    return b.append("]}").toString();
  }
}
