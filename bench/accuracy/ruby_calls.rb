# The oracle of bench/accuracy/bench_crossrepo_ruby.py: Ruby itself. Every call in the dependent's
# files whose receiver is a constant path (Rack::Utils.escape_html(...), Rack::Builder.new)
# is found by Ruby's own parser (Ripper); the library is loaded from its lib/ directory and
# the interpreter answers where the method that call runs is defined (Method#source_location),
# or for .new where the class is (Module#const_source_location). One JSON line per call the
# library defines: {"path", "line", "target", "target_line"} (paths relative to each root).
#
#     ruby bench/accuracy/ruby_calls.rb DEPENDENT_ROOT LIBRARY_ROOT LIBRARY_REQUIRE OUT.jsonl
require "ripper"
require "json"

site_root, lib_root, entry, out = ARGV
lib_dir = File.realpath(File.join(lib_root, "lib"))
$LOAD_PATH.unshift(lib_dir)
require entry

# "Rack::Utils" for a constant path node, nil for anything else
def const_path(node)
  return nil unless node.is_a?(Array)
  case node[0]
  when :var_ref, :top_const_ref
    tok = node[1]
    tok.is_a?(Array) && tok[0] == :@const ? tok[1] : nil
  when :const_path_ref
    head = const_path(node[1])
    head && node[2].is_a?(Array) && node[2][0] == :@const ? "#{head}::#{node[2][1]}" : nil
  end
end

def calls(node, found)
  return unless node.is_a?(Array)
  if %i[call command_call].include?(node[0])
    recv, meth = node[1], node[3]
    path = const_path(recv)
    if path && meth.is_a?(Array) && %i[@ident @const].include?(meth[0])
      found << [path, meth[1], meth[2][0]]
    end
  end
  node.each { |child| calls(child, found) }
end

def where(path, name)
  recv = Object.const_get(path)
  return nil unless recv.is_a?(Module)
  return Object.const_source_location(path) if name == "new" && recv.is_a?(Class)
  recv.method(name).source_location
rescue NameError, LoadError, StandardError, ScriptError
  nil
end

File.open(out, "w") do |io|
  Dir.glob("**/*.rb", base: site_root).sort.each do |rel|
    tree = Ripper.sexp(File.read(File.join(site_root, rel)))
    found = []
    calls(tree, found)
    found.each do |path, name, line|
      loc = where(path, name)
      next if loc.nil? || loc[0].nil?
      file = File.realpath(loc[0]) rescue next
      next unless file.start_with?(lib_dir + "/")
      target = file.delete_prefix(File.realpath(lib_root) + "/")
      io.puts({ path: rel, line: line, target: target, target_line: loc[1],
                receiver: path, name: name }.to_json)
    end
  end
end
