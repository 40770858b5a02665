; semgraph extraction query for C++.
; Captures: @definition.<kind> + @name (+ @owner: the class of an out-of-class method);
; @scope.namespace + @name; @import (#include); @call + @callee (+ @receiver).

(function_definition
  declarator: [(function_declarator declarator: [(identifier) (field_identifier)] @name)
               (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier)] @name))
               (reference_declarator (function_declarator declarator: [(identifier) (field_identifier)] @name))]) @definition.function
(function_definition
  declarator: [(function_declarator
                 declarator: (qualified_identifier scope: (_) @owner name: [(identifier) (destructor_name) (operator_name)] @name))
               (pointer_declarator declarator: (function_declarator
                 declarator: (qualified_identifier scope: (_) @owner name: [(identifier) (destructor_name) (operator_name)] @name)))
               (reference_declarator (function_declarator
                 declarator: (qualified_identifier scope: (_) @owner name: [(identifier) (destructor_name) (operator_name)] @name)))]) @definition.method
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(namespace_definition name: (_) @name) @scope.namespace

(preproc_include) @import

(call_expression function: (identifier) @callee) @call
(call_expression
  function: (field_expression argument: (_) @receiver field: (field_identifier) @callee)) @call
(call_expression
  function: (qualified_identifier scope: (_) @receiver name: (identifier) @callee)) @call
(new_expression type: (type_identifier) @callee) @call
