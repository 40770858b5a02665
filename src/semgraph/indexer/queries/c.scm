; semgraph extraction query for C.
; Captures: @definition.<kind> + @name; @import (#include); @call + @callee (+ @receiver).

(function_definition
  declarator: [(function_declarator declarator: (identifier) @name)
               (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
               (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))]) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum

(preproc_include) @import

(call_expression function: (identifier) @callee) @call
(call_expression
  function: (field_expression argument: (_) @receiver field: (field_identifier) @callee)) @call
