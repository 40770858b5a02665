// The Java compiler's own answer to "which method does this call run"
// (bench/accuracy/bench_crossrepo_jvm.py): the oracle for the Maven cross-repository links. Usage:
//   java JavacCalls.java DEPENDENT_SOURCES LIBRARY_SOURCEPATH OUT.jsonl
// javac parses and attributes every .java file under DEPENDENT_SOURCES, reading the library
// from its sources; each method call and `new` is written with the class that declares what it
// resolved to (the outermost class: its file) and the method's name (a constructor: the class's).
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;
import javax.lang.model.element.*;
import javax.tools.*;

public class JavacCalls {
  static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  public static void main(String[] args) throws Exception {
    Path root = Paths.get(args[0]).toAbsolutePath().normalize();
    List<File> files = new ArrayList<>();
    try (var walk = Files.walk(root)) {
      walk.filter(p -> p.toString().endsWith(".java")).sorted().forEach(p -> files.add(p.toFile()));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    var fm = javac.getStandardFileManager(null, null, null);
    var opts = List.of("-proc:none", "-implicit:none", "-nowarn", "-encoding", "ISO-8859-1",
        "-sourcepath", args[1],
        "-Xmaxerrs", "1000000");
    JavacTask task = (JavacTask) javac.getTask(new StringWriter(), fm, d -> {}, opts, null,
        fm.getJavaFileObjectsFromFiles(files));
    Iterable<? extends CompilationUnitTree> units = task.parse();
    task.analyze();
    Trees trees = Trees.instance(task);
    try (PrintWriter out = new PrintWriter(args[2], "UTF-8")) {
      for (CompilationUnitTree cu : units) {
        String path = root.relativize(Paths.get(cu.getSourceFile().toUri())).toString();
        new TreePathScanner<Void, Void>() {
          void emit(Tree node) {
            Element e = trees.getElement(getCurrentPath());
            if (e == null || !(e instanceof ExecutableElement)) return;
            Element outer = e.getEnclosingElement();
            while (outer != null && outer.getEnclosingElement() instanceof TypeElement) {
              outer = outer.getEnclosingElement();
            }
            if (!(outer instanceof TypeElement)) return;
            String name = e.getKind() == ElementKind.CONSTRUCTOR
                ? e.getEnclosingElement().getSimpleName().toString() : e.getSimpleName().toString();
            long start = trees.getSourcePositions().getStartPosition(cu, node);
            long line = cu.getLineMap().getLineNumber(start);
            out.println("{\"path\": " + quote(path) + ", \"line\": " + line + ", \"class\": "
                + quote(((TypeElement) outer).getQualifiedName().toString()) + ", \"name\": "
                + quote(name) + "}");
          }

          @Override
          public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
            emit(t);
            return super.visitMethodInvocation(t, v);
          }

          @Override
          public Void visitNewClass(NewClassTree t, Void v) {
            emit(t);
            return super.visitNewClass(t, v);
          }
        }.scan(cu, null);
      }
    }
  }
}
