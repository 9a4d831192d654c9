"""Body kinds: small sans-I/O readers, one per shape of call block (JSON envelope, XML
function/parameter elements, arg-key pairs, JSON arrays, special-token sections, attribute XML,
Harmony channels, pythonic calls ...). Each is shared by every dialect whose calls have that
shape and reports calls through the ``CallSink`` of ``toolbridge.syntax.dialect``."""
