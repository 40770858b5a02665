; semgraph extraction query for Swift.
; Captures: @definition.<kind> + @name; @scope.impl + @name (an extension: its methods'
; parent type); @import; @call + @callee (+ @receiver).

(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum
(class_declaration declaration_kind: ["class" "actor"] name: (type_identifier) @name) @definition.class
(class_declaration
  declaration_kind: "extension"
  name: (user_type . (type_identifier) @name)) @scope.impl
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration "init" @name) @definition.method

(import_declaration) @import

(call_expression . (simple_identifier) @callee) @call
(call_expression
  . (navigation_expression
      target: _ @receiver
      suffix: (navigation_suffix suffix: (simple_identifier) @callee))) @call
