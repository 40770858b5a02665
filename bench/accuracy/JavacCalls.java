// The Java compiler's own answer to "which method does this call run": the oracle for the
// Maven cross-repository links (bench/accuracy/bench_crossrepo_jvm.py) and for Java call
// resolution inside one repository (bench/accuracy/bench_accuracy.py). Usage:
//   java JavacCalls.java SOURCES SOURCEPATH OUT.jsonl [CLASSPATH]
// javac parses and attributes every .java file under SOURCES (module-info.java left out),
// reading further classes from SOURCEPATH ("" for none) and CLASSPATH. One JSON line per
// compilation unit ({"file": path}), then one per method call, `new` and `this(...)` /
// `super(...)` in it, in source order:
//   path, line (the call expression's first line), callee (the method's name, or the simple
//   name of the class after `new`), kind (call | new | chain)
// and what javac resolved it to: class (the outermost class declaring it: its file) and name
// (a constructor: the class's simple name) when it resolved to a method, else "unknown": true
// (a missing dependency, an error type). A target compiled from SOURCES also has "in_repo":
// true, "target" (its file under SOURCES), "target_line" (its declaration's first line; 0 when
// the compiler made it: a default constructor, an enum's values()), "declaring" (the declaring
// class's simple name) and "class_line" (that class's first line), for naming a definition.
// Every path is relative to SOURCES.
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;
import javax.lang.model.element.*;
import javax.lang.model.type.TypeKind;
import javax.lang.model.util.Elements;
import javax.tools.*;

public class JavacCalls {
  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  public static void main(String[] args) throws Exception {
    Path root = Paths.get(args[0]).toAbsolutePath().normalize();
    List<File> files = new ArrayList<>();
    try (var walk = Files.walk(root)) {
      walk.filter(p -> p.toString().endsWith(".java"))
          .filter(p -> !p.getFileName().toString().equals("module-info.java"))
          .sorted().forEach(p -> files.add(p.toFile()));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    var fm = javac.getStandardFileManager(null, null, null);
    var opts = new ArrayList<>(List.of("-proc:none", "-implicit:none", "-nowarn", "-encoding",
        "ISO-8859-1", "-sourcepath", args[1], "-Xmaxerrs", "1000000"));
    if (args.length > 3 && !args[3].isEmpty()) opts.addAll(List.of("-classpath", args[3]));
    JavacTask task = (JavacTask) javac.getTask(new StringWriter(), fm, d -> {}, opts, null,
        fm.getJavaFileObjectsFromFiles(files));
    Iterable<? extends CompilationUnitTree> units = task.parse();
    task.analyze();
    Trees trees = Trees.instance(task);
    Elements elements = task.getElements();
    SourcePositions pos = trees.getSourcePositions();
    try (PrintWriter out = new PrintWriter(args[2], "UTF-8")) {
      for (CompilationUnitTree cu : units) {
        String path = rel(root, cu);
        CharSequence text = cu.getSourceFile().getCharContent(true);
        out.println("{\"file\": " + quote(path) + "}");
        new TreePathScanner<Void, Void>() {
          long line(CompilationUnitTree unit, Tree node) {
            return unit.getLineMap().getLineNumber(pos.getStartPosition(unit, node));
          }

          String written(Tree type) {
            while (type instanceof ParameterizedTypeTree) {
              type = ((ParameterizedTypeTree) type).getType();
            }
            while (type instanceof AnnotatedTypeTree) {
              type = ((AnnotatedTypeTree) type).getUnderlyingType();
            }
            // the class's own name; what qualifies it (`Outer.` in `new Outer.Inner()`) is
            // the receiver of semgraph's call site, as in `a.b.m()`
            return type instanceof MemberSelectTree
                ? ((MemberSelectTree) type).getIdentifier().toString() : type.toString();
          }

          // the compiler's own trees (a constructor's implicit `super()`, an enum constant's
          // `new`) start where the source does not say what they are: left out
          boolean written(Tree node, String word) {
            long start = pos.getStartPosition(cu, node);
            return start >= 0 && start + word.length() <= text.length()
                && text.subSequence((int) start, (int) start + word.length()).toString()
                    .equals(word);
          }

          void emit(Tree node, String callee, String kind) {
            StringBuilder row = new StringBuilder("{\"path\": " + quote(path) + ", \"line\": "
                + line(cu, node) + ", \"callee\": " + quote(callee) + ", \"kind\": \""
                + kind + "\"");
            Element e = trees.getElement(getCurrentPath());
            if (node instanceof NewClassTree && ((NewClassTree) node).getClassBody() != null) {
              // an anonymous class: what it instantiates is the type written after `new`
              e = trees.getElement(new TreePath(getCurrentPath(),
                  ((NewClassTree) node).getIdentifier()));
            }
            String target = target(e);
            out.println(row + receiver(node) + (target == null ? ", \"unknown\": true}"
                : target + "}"));
          }

          // for sorting the disagreements: the call's argument count, its receiver's static
          // type, and a variable receiver's declared type as written ("" when the source
          // does not write it: a lambda's parameter, `var`)
          String receiver(Tree node) {
            List<? extends ExpressionTree> args = node instanceof NewClassTree
                ? ((NewClassTree) node).getArguments()
                : ((MethodInvocationTree) node).getArguments();
            String row = ", \"args\": " + args.size();
            if (!(node instanceof MethodInvocationTree)) return row;
            ExpressionTree select = ((MethodInvocationTree) node).getMethodSelect();
            if (!(select instanceof MemberSelectTree)) return row;
            ExpressionTree recv = ((MemberSelectTree) select).getExpression();
            TreePath at = new TreePath(new TreePath(getCurrentPath(), select), recv);
            javax.lang.model.type.TypeMirror type = trees.getTypeMirror(at);
            if (type != null && type.getKind() != TypeKind.ERROR) {
              row += ", \"recv\": " + quote(task.getTypes().erasure(type).toString());
            }
            Element var = trees.getElement(at);
            if (var instanceof VariableElement && var.getKind() != ElementKind.ENUM_CONSTANT) {
              Tree decl = trees.getTree(var);
              Tree declared = decl instanceof VariableTree ? ((VariableTree) decl).getType() : null;
              long start = declared == null ? -1 : pos.getStartPosition(cu, declared);
              row += ", \"recv_var\": " + quote(var.getKind().toString() + " "
                  + (start < 0 ? "" : declared.toString()));
            }
            return row;
          }

          String target(Element e) {
            if (e == null || e.asType().getKind() == TypeKind.ERROR) return null;
            boolean type = e instanceof TypeElement;  // the supertype of an anonymous class
            if (!type && !(e instanceof ExecutableElement)) return null;
            Element declaring = type ? e : e.getEnclosingElement();
            if (!(declaring instanceof TypeElement)) return null;
            Element outer = declaring;
            while (outer.getEnclosingElement() instanceof TypeElement) {
              outer = outer.getEnclosingElement();
            }
            String name = type || e.getKind() == ElementKind.CONSTRUCTOR
                ? declaring.getSimpleName().toString() : e.getSimpleName().toString();
            String row = ", \"class\": " + quote(((TypeElement) outer).getQualifiedName()
                .toString()) + ", \"name\": " + quote(name);
            TreePath cls = trees.getPath(declaring);
            if (cls == null) return row;  // read from a class file: the JDK, a dependency
            TreePath decl = trees.getPath(e);
            boolean made = type || decl == null || elements.getOrigin(e) != Elements.Origin.EXPLICIT
                || decl.getLeaf() instanceof ClassTree;
            CompilationUnitTree unit = cls.getCompilationUnit();
            return row + ", \"in_repo\": true, \"target\": " + quote(rel(root, unit))
                + ", \"target_line\": " + (made ? 0 : line(unit, decl.getLeaf()))
                + ", \"declaring\": " + quote(declaring.getSimpleName().toString())
                + ", \"class_line\": " + line(unit, cls.getLeaf());
          }

          @Override
          public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
            ExpressionTree select = t.getMethodSelect();
            String callee = select instanceof MemberSelectTree
                ? ((MemberSelectTree) select).getIdentifier().toString()
                : ((IdentifierTree) select).getName().toString();
            boolean chain = callee.equals("this") || callee.equals("super");
            if (chain && !(select instanceof MemberSelectTree) && !written(t, callee)) {
              return super.visitMethodInvocation(t, v);
            }
            emit(t, callee, chain ? "chain" : "call");
            return super.visitMethodInvocation(t, v);
          }

          @Override
          public Void visitNewClass(NewClassTree t, Void v) {
            if (t.getEnclosingExpression() == null && !written(t, "new")) {
              return super.visitNewClass(t, v);
            }
            emit(t, written(t.getIdentifier()), "new");
            return super.visitNewClass(t, v);
          }
        }.scan(cu, null);
      }
    }
  }

  static String rel(Path root, CompilationUnitTree unit) {
    return root.relativize(Paths.get(unit.getSourceFile().toUri())).toString();
  }
}
