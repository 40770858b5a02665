; semgraph extraction query for Kotlin.
; Captures: @package + @name (the file's package / namespace: the root of its names);
; @definition.<kind> + @name (+ @owner: the receiver type of an extension
; function); @import; @call + @callee (+ @receiver).

; (an interface is a class_declaration with the keyword "interface": extract.py names its kind)
(class_declaration name: (identifier) @name (enum_class_body)) @definition.enum
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(companion_object name: (identifier) @name) @definition.class
(function_declaration
  . (user_type . (identifier) @owner) name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(package_header (qualified_identifier) @name) @package

(import) @import

(call_expression . (identifier) @callee) @call
(call_expression
  . (navigation_expression . _ @receiver (identifier) @callee .)) @call
