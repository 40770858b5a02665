; semgraph extraction query for Scala.
; Captures: @package + @name (the file's package / namespace: the root of its names);
; @definition.<kind> + @name; @scope.namespace + @name (a package with a body);
; @import; @call + @callee (+ @receiver).
(package_clause name: (package_identifier) @name !body) @package

(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.trait
(enum_definition name: (identifier) @name) @definition.enum
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(package_clause name: (_) @name body: (template_body)) @scope.namespace

(import_declaration) @import

(call_expression function: (identifier) @callee) @call
(call_expression
  function: (field_expression value: _ @receiver field: (identifier) @callee)) @call
(call_expression
  function: (generic_function function: (identifier) @callee)) @call
(instance_expression . (type_identifier) @callee) @call
