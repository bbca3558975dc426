# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The protobuf wire between bytes and the JSON shape (plain dicts, lists and scalars), compiled:
the messages of `schema.json` as tables (`build`), a reader (`decode`) and a writer (`encode`)
driven by them. What each field means is decided in `codec`; this module only follows the tables.
"""

import sys
from datetime import timezone
from types import MemberDescriptorType

cimport cython
from cpython.datetime cimport (
    PyDateTime_DATE_GET_HOUR,
    PyDateTime_DATE_GET_MICROSECOND,
    PyDateTime_DATE_GET_MINUTE,
    PyDateTime_DATE_GET_SECOND,
    PyDateTime_DATE_GET_TZINFO,
    PyDateTime_GET_DAY,
    PyDateTime_GET_MONTH,
    PyDateTime_GET_YEAR,
    PyDateTime_Check,
    import_datetime,
)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItemWithError, PyDict_Next
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.string cimport memcmp, memcpy, memmove

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL
    bint PyUnicode_IS_COMPACT_ASCII(PyObject* s)
    Py_ssize_t PyUnicode_GET_LENGTH(PyObject* s)
    void* PyUnicode_DATA(PyObject* s)
    int PyUnicode_Compare(object a, object b) except? -1
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)

cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member

cdef extern from "time.h":
    ctypedef long time_t
    struct tm:
        int tm_sec
        int tm_min
        int tm_hour
        int tm_mday
        int tm_mon
        int tm_year
    tm* gmtime_r(const time_t* t, tm* out)


import_datetime()
_UTC = timezone.utc


class ProtobufError(ValueError):
    """Bytes that are not the message they are read as, or data that cannot be written as one."""


cdef enum:  # scalar types (MESSAGE: a message)
    MESSAGE = 0
    STRING = 1
    BYTES = 2
    BOOL = 3
    INT32 = 4
    INT64 = 5
    UINT32 = 6
    UINT64 = 7
    DOUBLE = 8
    FLOAT = 9

cdef enum:  # messages that stand for a JSON scalar
    PLAIN = 0
    TIME = 1
    MICRO_TIME = 2
    DURATION = 3
    QUANTITY = 4
    INT_OR_STRING = 5
    RAW = 6
    OR_ARRAY = 7
    OR_BOOL = 8
    OR_STRINGS = 9

cdef enum:  # wire types
    VARINT = 0
    FIXED64 = 1
    LENGTH = 2
    FIXED32 = 5

SCALAR_TYPES = {
    "string": STRING,
    "bytes": BYTES,
    "bool": BOOL,
    "int32": INT32,
    "int64": INT64,
    "uint32": UINT32,
    "uint64": UINT64,
    "double": DOUBLE,
    "float": FLOAT,
}
SPECIAL_KINDS = {
    "time": TIME,
    "micro_time": MICRO_TIME,
    "duration": DURATION,
    "quantity": QUANTITY,
    "int_or_string": INT_OR_STRING,
    "raw": RAW,
    "or_array": OR_ARRAY,
    "or_bool": OR_BOOL,
    "or_strings": OR_STRINGS,
}


@cython.final
cdef class Field:
    cdef readonly int number
    cdef readonly object json  # str; "" for a message inlined into its parent
    cdef readonly int type  # a scalar type, or MESSAGE
    cdef readonly Message sub
    cdef readonly bint repeated
    cdef readonly int map_key  # the key's scalar type of a map field, else 0
    cdef readonly bint keep_zero
    cdef readonly bint inline


cdef enum:
    MAX_NUMBER = 64  # field numbers are below this (44 at most in the served groups)


# A field as the reader and writer follow it (its Field and Message keep what it points to).
cdef struct Info:
    bint known  # False: no field has this number
    int number
    int type
    int map_key
    bint repeated
    bint keep_zero
    bint inline
    PyObject* json  # the Field's JSON name
    PyObject* sub  # the Message of a message field, else NULL


@cython.final
cdef class Message:
    cdef readonly object name
    cdef readonly list fields  # in number order
    cdef Info info[MAX_NUMBER]  # each number's field
    cdef int top  # the highest field number, plus one
    cdef dict by_json  # JSON name -> Field, inlined messages' fields excepted
    cdef list inline  # the fields holding a message inlined in JSON
    cdef readonly int special
    cdef readonly bint is_list
    cdef Message props  # the schema message of the CRD schema's either-or types
    cdef dict by_type  # a msgspec Struct type -> its _Slots
    cdef object last_type  # the Struct type last written as this message, and its _Slots
    cdef object last_slots


cdef object _callbacks = {}  # name -> a Python function the wire leaves to `codec`


def build(dict data, dict specials, object props_name, dict callbacks):
    """The tables of every message in `data` (schema.json's `messages`), by name. `specials` maps
    a message name to its kind (SPECIAL_KINDS); `callbacks` are the Python functions for values
    the wire does not convert itself (durations, raw JSON, times in a form other than RFC 3339)."""
    _callbacks.clear()
    _callbacks.update(callbacks)
    cdef dict out = {}
    cdef Message m
    cdef Field f
    cdef Info* info
    for name in data:
        m = Message.__new__(Message)
        m.name = name
        m.fields = []
        m.top = 0
        m.by_json = {}
        m.inline = []
        m.by_type = {}
        m.special = SPECIAL_KINDS[specials[name]] if name in specials else PLAIN
        m.is_list = bool(data[name].get("list", False))
        out[name] = m
    for name, entry in data.items():
        m = out[name]
        if max((row["n"] for row in entry["fields"]), default=0) >= MAX_NUMBER:
            raise ValueError(f"{name}: a field number of {MAX_NUMBER} or more")
        for row in sorted(entry["fields"], key=lambda r: r["n"]):
            f = Field.__new__(Field)
            f.number = row["n"]
            f.inline = bool(row.get("inline", False))
            f.json = "" if f.inline else sys.intern(row["json"])  # interned: the models' field names are
            kind = row["type"]
            f.type = SCALAR_TYPES.get(kind, MESSAGE)
            f.sub = out[kind] if f.type == MESSAGE else None
            f.repeated = bool(row.get("repeated", False))
            f.map_key = SCALAR_TYPES[row["mapKey"]] if row.get("mapKey") else 0
            f.keep_zero = bool(row.get("pointer", False) or row.get("always", False))
            m.fields.append(f)
            info = &m.info[f.number]
            info.known, info.number, info.type, info.map_key = True, f.number, f.type, f.map_key
            info.repeated, info.keep_zero, info.inline = f.repeated, f.keep_zero, f.inline
            info.json = <PyObject*>f.json
            info.sub = NULL if f.sub is None else <PyObject*>f.sub
            m.top = max(m.top, f.number + 1)
            if f.inline:
                m.inline.append(f)
            else:
                m.by_json[f.json] = f
        if m.special in (OR_ARRAY, OR_BOOL, OR_STRINGS):
            m.props = out[props_name]
    return out


# -- reading --------------------------------------------------------------------------------------


cdef struct Span:
    Py_ssize_t start
    Py_ssize_t end


cdef inline int _varint(const unsigned char* buf, Py_ssize_t end, Py_ssize_t* pos, uint64_t* out) except -1:
    cdef uint64_t result = 0
    cdef int shift = 0
    cdef unsigned char b
    if pos[0] < end and buf[pos[0]] < 0x80:  # most keys and lengths: one byte
        out[0] = buf[pos[0]]
        pos[0] += 1
        return 0
    while True:
        if pos[0] >= end:
            raise ProtobufError("message ends inside a field")
        b = buf[pos[0]]
        pos[0] += 1
        result |= (<uint64_t>(b & 0x7F)) << shift
        if b < 0x80:
            out[0] = result
            return 0
        shift += 7
        if shift >= 70:
            raise ProtobufError("a varint longer than ten bytes")


cdef inline int _field(
    const unsigned char* buf, Py_ssize_t end, Py_ssize_t* pos, int* number, int* wire, uint64_t* value, Span* span
) except -1:
    """One field's key and value: a varint or fixed value in `value`, a length-delimited one in `span`."""
    cdef uint64_t key, length
    cdef Py_ssize_t width
    if pos[0] < end and buf[pos[0]] < 0x80:  # a one-byte key: field numbers below 16
        key = buf[pos[0]]
        pos[0] += 1
    else:
        _varint(buf, end, pos, &key)
    number[0] = <int>(key >> 3)
    wire[0] = <int>(key & 7)
    if wire[0] == VARINT:
        _varint(buf, end, pos, value)
    elif wire[0] == LENGTH:
        if pos[0] < end and buf[pos[0]] < 0x80:  # a length below 128
            length = buf[pos[0]]
            pos[0] += 1
        else:
            _varint(buf, end, pos, &length)
        if length > <uint64_t>(end - pos[0]):
            raise ProtobufError("message ends inside a field")
        span.start = pos[0]
        span.end = pos[0] + <Py_ssize_t>length
        pos[0] = span.end
    elif wire[0] == FIXED64 or wire[0] == FIXED32:
        width = 8 if wire[0] == FIXED64 else 4
        if end - pos[0] < width:
            raise ProtobufError("message ends inside a field")
        value[0] = 0
        memcpy(value, buf + pos[0], width)
        pos[0] += width
    else:
        raise ProtobufError(f"wire type {wire[0]} is not supported")
    return 0


cdef object _text(const unsigned char* buf, Span span):
    """UTF-8 bytes as a str, an invalid sequence read as U+FFFD as Go's JSON encoder writes it."""
    cdef Py_ssize_t size = span.end - span.start
    cdef Py_ssize_t i
    cdef const unsigned char* p = buf + span.start
    for i in range(size):
        if p[i] >= 0x80:
            return PyUnicode_DecodeUTF8(<const char*>p, size, "replace")
    text = PyUnicode_New(size, 127)  # ASCII, as most of it is: copied as it is
    memcpy(PyUnicode_DATA(<PyObject*>text), p, size)
    return text


cdef enum:
    KEYS = 1024  # map keys remembered (a power of two)
    KEY_SIZE = 32  # the longest key remembered

cdef PyObject* _keys[KEYS]  # recently read short ASCII texts, by a hash of their bytes


cdef object _short_text(const unsigned char* buf, Span span):
    """A map key or a quantity: the same str for the same short ASCII bytes (label names, resource
    names, "100m"), its hash already computed for a dict it goes into, as JSON decoders keep their
    keys."""
    cdef Py_ssize_t size = span.end - span.start
    cdef Py_ssize_t i
    cdef uint64_t h = 14695981039346656037ULL
    cdef PyObject* hit
    if size == 0 or size > KEY_SIZE:
        return _text(buf, span)
    for i in range(size):
        h = (h ^ buf[span.start + i]) * 1099511628211ULL
    i = <Py_ssize_t>(h & (KEYS - 1))
    hit = _keys[i]
    if hit != NULL and PyUnicode_GET_LENGTH(hit) == size and memcmp(PyUnicode_DATA(hit), buf + span.start, size) == 0:
        return <object>hit
    text = _text(buf, span)
    if PyUnicode_IS_COMPACT_ASCII(<PyObject*>text):
        hash(text)
        Py_XDECREF(_keys[i])
        Py_INCREF(text)
        _keys[i] = <PyObject*>text
    return text


cdef object _scalar(int type_, int wire, uint64_t value, const unsigned char* buf, Span span):
    cdef double d
    cdef float fl
    cdef uint32_t u32
    if type_ == STRING:
        if wire != LENGTH:
            raise ProtobufError("a string field that is not length-delimited")
        return _text(buf, span)
    if type_ == BYTES:
        if wire != LENGTH:
            raise ProtobufError("a bytes field that is not length-delimited")
        return _callbacks["b64encode"](PyBytes_FromStringAndSize(<const char*>buf + span.start, span.end - span.start))
    if wire == LENGTH:
        raise ProtobufError("a scalar field that is length-delimited")
    if type_ == BOOL:
        return value != 0
    if type_ == INT32:
        return <int32_t>(<uint32_t>value) if value <= 0xFFFFFFFF else <int64_t>value
    if type_ == INT64:
        return <int64_t>value
    if type_ == UINT32 or type_ == UINT64:
        return value
    if type_ == DOUBLE:
        memcpy(&d, &value, 8)
        return d
    u32 = <uint32_t>value
    memcpy(&fl, &u32, 4)
    return fl


cdef inline bint _zero(object item):
    if item is False:
        return True
    if type(item) is str:
        return len(<str>item) == 0
    if type(item) is int or type(item) is float:
        return item == 0
    return False


cdef object _read(Message m, const unsigned char* buf, Py_ssize_t start, Py_ssize_t end, dict into):
    if m.special != PLAIN:
        return _read_special(m, buf, start, end)
    cdef dict out = {} if into is None else into
    cdef Py_ssize_t pos = start
    cdef int number, wire
    cdef uint64_t value = 0
    cdef uint64_t held = 0  # the fields that have a value in `out`, a bit for each number
    cdef uint64_t bit
    cdef int last = 0  # the repeated or map field read last, and the list or dict holding it
    cdef object container = None
    cdef Span span
    cdef Info* f
    cdef object item
    while pos < end:
        _field(buf, end, &pos, &number, &wire, &value, &span)
        if number <= 0 or number >= m.top or not m.info[number].known:
            continue  # a field this schema does not know: skipped, as proto2 readers skip it
        f = &m.info[number]
        bit = (<uint64_t>1) << number
        if f.inline:
            if wire != LENGTH:
                raise ProtobufError(f"{m.name}: field {number} is not a message")
            out.update(_read(<Message>f.sub, buf, span.start, span.end, None))
        elif f.map_key or f.repeated:
            if number != last:
                if held & bit:
                    container = out[<object>f.json]
                else:
                    container = {} if f.map_key else []
                    out[<object>f.json] = container
                    held |= bit
                last = number
            if f.map_key:
                if wire != LENGTH:
                    raise ProtobufError(f"{m.name}: field {number} is not a map entry")
                _read_entry(f, buf, span, <dict>container)
            elif f.type == MESSAGE:
                if wire != LENGTH:
                    raise ProtobufError(f"{m.name}: field {number} is not a message")
                (<list>container).append(_read(<Message>f.sub, buf, span.start, span.end, None))
            elif wire == LENGTH and f.type != STRING and f.type != BYTES:
                _read_packed(f.type, buf, span, <list>container)
            else:
                (<list>container).append(_scalar(f.type, wire, value, buf, span))
        else:
            if f.type == MESSAGE:
                if wire != LENGTH:
                    raise ProtobufError(f"{m.name}: field {number} is not a message")
                item = _read(<Message>f.sub, buf, span.start, span.end, None)
            else:
                item = _scalar(f.type, wire, value, buf, span)
            if item is None or (not f.keep_zero and _zero(item)):
                if held & bit:
                    del out[<object>f.json]
                    held &= ~bit
            else:
                out[<object>f.json] = item
                held |= bit
    if m.is_list:
        return out.get((<Field>m.fields[0]).json, [])
    return out


cdef int _read_packed(int type_, const unsigned char* buf, Span span, list items) except -1:
    cdef Py_ssize_t pos = span.start
    cdef uint64_t value = 0
    cdef Span none
    none.start = none.end = 0
    while pos < span.end:
        if type_ == DOUBLE:
            if span.end - pos < 8:
                raise ProtobufError("message ends inside a field")
            memcpy(&value, buf + pos, 8)
            pos += 8
            items.append(_scalar(type_, FIXED64, value, buf, none))
        elif type_ == FLOAT:
            if span.end - pos < 4:
                raise ProtobufError("message ends inside a field")
            value = 0
            memcpy(&value, buf + pos, 4)
            pos += 4
            items.append(_scalar(type_, FIXED32, value, buf, none))
        else:
            _varint(buf, span.end, &pos, &value)
            items.append(_scalar(type_, VARINT, value, buf, none))
    return 0


cdef int _read_entry(Info* f, const unsigned char* buf, Span entry, dict into) except -1:
    """One map entry, put into the map's dict."""
    cdef Py_ssize_t pos = entry.start
    cdef int number, wire
    cdef uint64_t value = 0
    cdef Span span
    cdef object key = None
    cdef object item = None
    while pos < entry.end:
        _field(buf, entry.end, &pos, &number, &wire, &value, &span)
        if number == 1:
            key = _short_text(buf, span) if f.map_key == STRING and wire == LENGTH else _scalar(f.map_key, wire, value, buf, span)
        elif number == 2:
            if f.type == MESSAGE:
                if wire != LENGTH:
                    raise ProtobufError("a map value that is not a message")
                item = _read(<Message>f.sub, buf, span.start, span.end, None)
            else:
                item = _scalar(f.type, wire, value, buf, span)
    if key is None:
        key = "" if f.map_key == STRING else 0
    into[key] = item
    return 0


cdef object _read_special(Message m, const unsigned char* buf, Py_ssize_t start, Py_ssize_t end):
    cdef Py_ssize_t pos = start
    cdef int number, wire
    cdef uint64_t value = 0
    cdef Span span
    cdef int64_t ints[4]
    cdef Span spans[4]
    cdef bint has[4]
    cdef list many = None
    cdef int i
    for i in range(4):
        ints[i] = 0
        has[i] = False
        spans[i].start = spans[i].end = 0
    while pos < end:
        _field(buf, end, &pos, &number, &wire, &value, &span)
        if number < 1 or number > 3:
            continue
        has[number] = True
        if wire == LENGTH:
            spans[number] = span
            if number == 2 and (m.special == OR_ARRAY or m.special == OR_STRINGS):
                if many is None:
                    many = []
                many.append(_read(m.props, buf, span.start, span.end, None) if m.special == OR_ARRAY else _text(buf, span))
        else:
            ints[number] = <int64_t>value
    kind = m.special
    if kind == TIME or kind == MICRO_TIME:
        if start == end:
            return None  # Go's zero time, written as an empty Timestamp: null in JSON
        return _format_time(ints[1], <int32_t>ints[2], kind == MICRO_TIME)
    if kind == QUANTITY:
        return _short_text(buf, spans[1]) if has[1] else ""
    if kind == INT_OR_STRING:
        if ints[1] == 1:
            return _text(buf, spans[3]) if has[3] else ""
        return <int32_t>ints[2]
    if kind == DURATION:
        return _callbacks["format_duration"](ints[1])
    if kind == RAW:
        if spans[1].end == spans[1].start:
            return None
        return _callbacks["raw_json"](PyBytes_FromStringAndSize(<const char*>buf + spans[1].start, spans[1].end - spans[1].start))
    if kind == OR_ARRAY or kind == OR_STRINGS:
        if many:
            return many
        return _read(m.props, buf, spans[1].start, spans[1].end, None) if has[1] else None
    # OR_BOOL
    if has[2]:
        return _read(m.props, buf, spans[2].start, spans[2].end, None)
    return ints[1] != 0


cdef inline void _put_digits(char* p, int value, int width) noexcept:
    """`value` in `width` decimal digits at `p`, zeros first."""
    cdef int i
    for i in range(width - 1, -1, -1):
        p[i] = <char>(48 + value % 10)
        value //= 10


cdef object _format_time(int64_t seconds, int32_t nanos, bint micro):
    """An instant in RFC 3339 as metav1.Time (seconds) or MicroTime (microseconds) writes it."""
    cdef tm parts
    cdef time_t t = <time_t>seconds
    cdef char text[64]
    cdef int size = 20
    if nanos < 0 or nanos >= 1000000000:  # carried into the seconds, as Go's time.Unix does
        t += nanos // 1000000000
        nanos = nanos % 1000000000
    if gmtime_r(&t, &parts) == NULL:
        raise ProtobufError("a time out of range")
    if parts.tm_year + 1900 < 0 or parts.tm_year + 1900 > 9999:  # the year in as many digits as it takes
        size = snprintf(text, 64, "%04d-%02d-%02dT%02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1,
                        parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
        if micro:
            size += snprintf(text + size, 64 - size, ".%06d", <int>(nanos // 1000))
        text[size] = 90  # Z
        return PyUnicode_DecodeASCII(text, size + 1, NULL)
    memcpy(text, b"0000-00-00T00:00:00", 19)
    _put_digits(text, parts.tm_year + 1900, 4)
    _put_digits(text + 5, parts.tm_mon + 1, 2)
    _put_digits(text + 8, parts.tm_mday, 2)
    _put_digits(text + 11, parts.tm_hour, 2)
    _put_digits(text + 14, parts.tm_min, 2)
    _put_digits(text + 17, parts.tm_sec, 2)
    if micro:
        text[19] = 46  # .
        _put_digits(text + 20, <int>(nanos // 1000), 6)
        size = 27
    text[size - 1] = 90  # Z
    return PyUnicode_DecodeASCII(text, size, NULL)


def decode(Message m, bytes data, Py_ssize_t start=0, end=None, dict into=None):
    """The JSON shape of the message `m` in `data[start:end]` (its fields added to `into`, when
    given, for a message that is an object)."""
    cdef Py_ssize_t stop = PyBytes_GET_SIZE(data) if end is None else end
    if start < 0 or stop > PyBytes_GET_SIZE(data) or start > stop:
        raise ValueError("a span outside the data")
    return _read(m, <const unsigned char*>PyBytes_AS_STRING(data), start, stop, into)


# -- writing --------------------------------------------------------------------------------------


@cython.final
cdef class _Out:
    cdef unsigned char* data
    cdef Py_ssize_t n
    cdef Py_ssize_t cap

    def __cinit__(self):
        self.cap = 512
        self.n = 0
        self.data = <unsigned char*>PyMem_Malloc(self.cap)
        if self.data == NULL:
            raise MemoryError()

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef inline int room(self, Py_ssize_t extra) except -1:
        cdef Py_ssize_t want = self.n + extra
        cdef unsigned char* grown
        if want <= self.cap:
            return 0
        while self.cap < want:
            self.cap *= 2
        grown = <unsigned char*>PyMem_Realloc(self.data, self.cap)
        if grown == NULL:
            raise MemoryError()
        self.data = grown
        return 0

    cdef inline void put(self, uint64_t value) noexcept:
        """A varint, in room already made."""
        while value >= 0x80:
            self.data[self.n] = <unsigned char>((value & 0x7F) | 0x80)
            self.n += 1
            value >>= 7
        self.data[self.n] = <unsigned char>value
        self.n += 1

    cdef inline int varint(self, uint64_t value) except -1:
        self.room(10)
        self.put(value)
        return 0

    cdef inline int raw(self, const char* p, Py_ssize_t size) except -1:
        self.room(size)
        memcpy(self.data + self.n, p, size)
        self.n += size
        return 0

    cdef inline Py_ssize_t open(self, int number) except -1:
        """Start a length-delimited field; `close` writes its length."""
        self.room(11)
        self.put((<uint64_t>number << 3) | LENGTH)
        self.n += 1
        return self.n

    cdef inline int close(self, Py_ssize_t body) except -1:
        cdef uint64_t length = <uint64_t>(self.n - body)
        cdef uint64_t v = length
        cdef int width = 1
        while v >= 0x80:
            v >>= 7
            width += 1
        if width > 1:
            self.room(width - 1)
            memmove(self.data + body + width - 1, self.data + body, <size_t>length)
            self.n += width - 1
        cdef Py_ssize_t at = body - 1
        v = length
        while v >= 0x80:
            self.data[at] = <unsigned char>((v & 0x7F) | 0x80)
            at += 1
            v >>= 7
        self.data[at] = <unsigned char>v
        return 0

    cdef inline int text(self, int number, object value) except -1:
        cdef Py_ssize_t size
        cdef const char* p
        if type(value) is str and PyUnicode_IS_COMPACT_ASCII(<PyObject*>value):  # its bytes are its UTF-8
            p = <const char*>PyUnicode_DATA(<PyObject*>value)
            size = PyUnicode_GET_LENGTH(<PyObject*>value)
        else:
            if type(value) is not str:
                value = str(value)
            p = PyUnicode_AsUTF8AndSize(value, &size)
        self.room(size + 20)
        self.put((<uint64_t>number << 3) | LENGTH)
        self.put(<uint64_t>size)
        memcpy(self.data + self.n, p, size)
        self.n += size
        return 0

    cdef inline int blob(self, int number, bytes value) except -1:
        self.varint((<uint64_t>number << 3) | LENGTH)
        self.varint(<uint64_t>PyBytes_GET_SIZE(value))
        self.raw(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value))
        return 0

    cdef inline int integer(self, int number, object value) except -1:
        cdef uint64_t v
        cdef int64_t signed
        if value is True or value is False:
            v = 1 if value is True else 0
        else:
            if type(value) is not int:
                value = int(value)
            try:
                signed = value
                v = <uint64_t>signed  # a negative number as its 64-bit two's complement, as Go writes it
            except OverflowError:
                v = value  # above int64's range: a uint64
        self.varint(<uint64_t>number << 3)
        self.varint(v)
        return 0


cdef _Out _spare = None  # a writer's buffer kept for the next object


cdef inline _Out _take():
    global _spare
    cdef _Out out = _spare
    if out is None:
        return _Out()
    _spare = None
    out.n = 0
    return out


cdef inline void _give(_Out out) noexcept:
    global _spare
    if out.cap <= 1 << 20:
        _spare = out


cdef int _scalar_out(_Out out, int number, int type_, object value) except -1:
    cdef double d
    cdef float fl
    if type_ == STRING:
        out.text(number, value)
    elif type_ == BYTES:
        out.blob(number, _callbacks["b64decode"](value) if isinstance(value, str) else bytes(value))
    elif type_ == DOUBLE:
        d = float(value)
        out.varint((<uint64_t>number << 3) | FIXED64)
        out.raw(<const char*>&d, 8)
    elif type_ == FLOAT:
        fl = float(value)
        out.varint((<uint64_t>number << 3) | FIXED32)
        out.raw(<const char*>&fl, 4)
    else:
        out.integer(number, value)
    return 0


cdef int _value_out(_Out out, Info* f, object value) except -1:
    cdef Py_ssize_t body
    if f.type == MESSAGE:
        body = out.open(f.number)
        _write(out, <Message>f.sub, value)
        out.close(body)
    else:
        _scalar_out(out, f.number, f.type, value)
    return 0


cdef int _write(_Out out, Message m, object data) except -1:
    cdef Field field
    cdef Py_ssize_t pos = 0
    cdef PyObject* slots[MAX_NUMBER]
    cdef PyObject* key
    cdef PyObject* value
    cdef PyObject* found
    cdef int i
    if m.special != PLAIN:
        return _write_special(out, m, data)
    if type(data) is not dict:
        if m.is_list:
            for item in data:
                _value_out(out, &m.info[(<Field>m.fields[0]).number], item)
            return 0
        return _write_struct(out, m, data)
    # the data's keys put at their fields' numbers, then written in number order
    for i in range(m.top):
        slots[i] = NULL
    for field in m.inline:  # written from the parent's keys, even when it holds nothing
        slots[field.number] = <PyObject*>data
    while PyDict_Next(<dict>data, &pos, &key, &value):
        found = PyDict_GetItemWithError(m.by_json, <object>key)
        if found is not NULL and <object>value is not None:
            slots[(<Field>found).number] = value
    for i in range(m.top):
        if slots[i] != NULL:
            _field_out(out, &m.info[i], <object>slots[i])
    return 0


@cython.final
cdef class _Slots:
    """Where a Struct type keeps the values of a message's fields, in number order: each row a
    field and the offset of its slot in the object (-1: the object itself, for an inlined message)."""
    cdef Info** fields
    cdef Py_ssize_t* offsets
    cdef Py_ssize_t n

    def __dealloc__(self):
        PyMem_Free(self.fields)
        PyMem_Free(self.offsets)


cdef int _write_struct(_Out out, Message m, object data) except -1:
    """A msgspec Struct (the models), its fields read from their slots: what `msgspec.to_builtins`
    would make of it, without making it."""
    cdef _Slots slots
    cdef Py_ssize_t i, offset
    cdef PyObject* value
    if type(data) is m.last_type:  # a message is mostly written from one Struct type
        slots = <_Slots>m.last_slots
    else:
        found = m.by_type.get(type(data))
        slots = <_Slots>found if found is not None else _slots_of(m, type(data))
        m.last_type, m.last_slots = type(data), slots
    for i in range(slots.n):
        offset = slots.offsets[i]
        if offset < 0:
            _field_out(out, slots.fields[i], data)
            continue
        value = (<PyObject**>((<char*><PyObject*>data) + offset))[0]
        if value != NULL and <object>value is not None:
            _field_out(out, slots.fields[i], <object>value)
    return 0


cdef _Slots _slots_of(Message m, type cls):
    names = getattr(cls, "__struct_encode_fields__", None)
    if names is None:
        raise ProtobufError(f"{m.name}: expected an object, got {cls.__name__}")
    rows = []
    for attr, name in zip(cls.__struct_fields__, names):
        f = m.by_json.get(name)
        if f is None:
            continue
        descriptor = getattr(cls, attr)
        if type(descriptor) is not MemberDescriptorType:
            raise ProtobufError(f"{m.name}: {cls.__name__}.{attr} is not a slot")
        rows.append(((<Field>f).number, (<PyMemberDescrObject*><PyObject*>descriptor).d_member.offset))
    for f in m.inline:
        rows.append(((<Field>f).number, -1))
    rows.sort()
    cdef _Slots slots = _Slots.__new__(_Slots)
    slots.n = len(rows)
    slots.fields = <Info**>PyMem_Malloc(max(1, slots.n) * sizeof(Info*))
    slots.offsets = <Py_ssize_t*>PyMem_Malloc(max(1, slots.n) * sizeof(Py_ssize_t))
    if slots.fields == NULL or slots.offsets == NULL:
        raise MemoryError()
    for i, (number, offset) in enumerate(rows):
        slots.fields[i] = &m.info[<int>number]
        slots.offsets[i] = offset
    m.by_type[cls] = slots
    return slots


cdef enum:
    SMALL_MAP = 16  # maps of this many entries or fewer are ordered without a list


cdef bint _small_map(_Out out, Info* f, dict value) except -1:
    """A map of a few entries with text keys, written in key order: its entries are put in order
    as they are read (mostly already in order, each then compared once); False (nothing written)
    for a larger map or other keys."""
    cdef PyObject* keys[SMALL_MAP]
    cdef PyObject* items[SMALL_MAP]
    cdef Py_ssize_t pos = 0
    cdef Py_ssize_t n = 0
    cdef Py_ssize_t i
    cdef PyObject* key
    cdef PyObject* item
    if len(value) > SMALL_MAP:
        return False
    while PyDict_Next(value, &pos, &key, &item):
        if type(<object>key) is not str:
            return False
        i = n
        while i > 0 and PyUnicode_Compare(<object>keys[i - 1], <object>key) > 0:
            keys[i], items[i] = keys[i - 1], items[i - 1]
            i -= 1
        keys[i], items[i] = key, item
        n += 1
    for i in range(n):  # the dict is not changed while it is written: borrowed keys and values hold
        _entry_out(out, f, <object>keys[i], <object>items[i])
    return True


cdef int _entry_out(_Out out, Info* f, object key, object item) except -1:
    """One map entry: the key as field 1, the value as field 2."""
    cdef Py_ssize_t entry = out.open(f.number)
    cdef Py_ssize_t body
    _scalar_out(out, 1, f.map_key, key)
    if item is not None:
        if f.type == MESSAGE:
            body = out.open(2)
            _write(out, <Message>f.sub, item)
            out.close(body)
        else:
            _scalar_out(out, 2, f.type, item)
    elif f.type == MESSAGE:
        out.close(out.open(2))  # a zero message value is written, as Go writes it
    out.close(entry)
    return 0


cdef int _field_out(_Out out, Info* f, object value) except -1:
    """One present field: an inlined message, a map, a list or a single value."""
    cdef Py_ssize_t body
    if f.inline:
        body = out.open(f.number)
        _write(out, <Message>f.sub, value)
        out.close(body)
    elif f.map_key:
        if type(value) is not dict or not _small_map(out, f, <dict>value):
            for k in sorted(value):
                _entry_out(out, f, k, value[k])
    elif f.repeated:
        for element in value:
            _value_out(out, f, element)
    else:
        _value_out(out, f, value)
    return 0


cdef inline int _digits(const char* p, int n) noexcept:
    """The number in `n` decimal digits at `p`, or -1."""
    cdef int value = 0
    cdef int i
    for i in range(n):
        if p[i] < 48 or p[i] > 57:
            return -1
        value = value * 10 + (p[i] - 48)
    return value


cdef inline int64_t _days_from_civil(int64_t y, int m, int d) noexcept:
    """Days since 1970-01-01 of a proleptic Gregorian date."""
    y -= m <= 2
    cdef int64_t era = (y if y >= 0 else y - 399) // 400
    cdef int64_t yoe = y - era * 400
    cdef int64_t doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    cdef int64_t doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


cdef bint _rfc3339(str text, int64_t* seconds, int64_t* nanos) except -1:
    """Read `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±hh:mm)` into seconds and nanoseconds (the fraction
    kept to the microsecond, as a Python datetime keeps it); False for any other form."""
    cdef Py_ssize_t n
    cdef const char* p = PyUnicode_AsUTF8AndSize(text, &n)
    cdef int year, month, day, hour, minute, second, digits = 0, micro = 0, sign, oh, om
    cdef Py_ssize_t i = 19
    if n < 20 or p[4] != 45 or p[7] != 45 or (p[10] != 84 and p[10] != 116) or p[13] != 58 or p[16] != 58:
        return False
    year, month, day = _digits(p, 4), _digits(p + 5, 2), _digits(p + 8, 2)
    hour, minute, second = _digits(p + 11, 2), _digits(p + 14, 2), _digits(p + 17, 2)
    if year < 0 or month < 1 or month > 12 or day < 1 or day > 31 or hour < 0 or hour > 23:
        return False
    if minute < 0 or minute > 59 or second < 0 or second > 59:
        return False
    if p[i] == 46:
        i += 1
        while i < n and 48 <= p[i] <= 57:
            if digits < 6:
                micro = micro * 10 + (p[i] - 48)
            digits += 1
            i += 1
        if digits == 0:
            return False
        while digits < 6:
            micro *= 10
            digits += 1
    if i == n - 1 and (p[i] == 90 or p[i] == 122):
        sign = oh = om = 0
    elif i == n - 6 and (p[i] == 43 or p[i] == 45) and p[i + 3] == 58:
        sign = 1 if p[i] == 43 else -1
        oh, om = _digits(p + i + 1, 2), _digits(p + i + 4, 2)
        if oh < 0 or om < 0:
            return False
    else:
        return False
    seconds[0] = (_days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
                  - sign * (oh * 3600 + om * 60))
    nanos[0] = micro * 1000
    return True


cdef int _write_special(_Out out, Message m, object data) except -1:
    cdef Py_ssize_t body
    cdef int64_t seconds = 0, nanos = 0
    kind = m.special
    if kind == TIME or kind == MICRO_TIME:
        if PyDateTime_Check(data) and <object>PyDateTime_DATE_GET_TZINFO(data) is _UTC:
            seconds = (_days_from_civil(PyDateTime_GET_YEAR(data), PyDateTime_GET_MONTH(data), PyDateTime_GET_DAY(data))
                       * 86400 + PyDateTime_DATE_GET_HOUR(data) * 3600 + PyDateTime_DATE_GET_MINUTE(data) * 60
                       + PyDateTime_DATE_GET_SECOND(data))
            nanos = PyDateTime_DATE_GET_MICROSECOND(data) * 1000
        elif type(data) is not str or not _rfc3339(data, &seconds, &nanos):
            seconds, nanos = _callbacks["time_parts"](data)
        out.integer(1, seconds)
        out.integer(2, nanos)
    elif kind == QUANTITY:
        out.text(1, data)
    elif kind == INT_OR_STRING:
        if isinstance(data, str):
            out.integer(1, 1)
            out.integer(2, 0)
            out.text(3, data)
        else:
            out.integer(1, 0)
            out.integer(2, int(data))
            out.text(3, "")
    elif kind == DURATION:
        out.integer(1, _callbacks["parse_duration"](data) if isinstance(data, str) else int(data))
    elif kind == RAW:
        out.blob(1, _callbacks["raw_bytes"](data))
    elif kind == OR_ARRAY:
        if isinstance(data, list):
            for item in data:
                body = out.open(2)
                _write(out, m.props, item)
                out.close(body)
        else:
            body = out.open(1)
            _write(out, m.props, data)
            out.close(body)
    elif kind == OR_BOOL:
        if isinstance(data, bool):
            out.integer(1, data)
        else:
            out.integer(1, True)
            body = out.open(2)
            _write(out, m.props, data)
            out.close(body)
    else:  # OR_STRINGS
        if isinstance(data, list):
            for item in data:
                out.text(2, item)
        else:
            body = out.open(1)
            _write(out, m.props, data)
            out.close(body)
    return 0


def encode(Message m, object data):
    """The message `m` with the content of `data`: its JSON shape, or a model (a msgspec Struct)
    read as `msgspec.to_builtins` would read it. ProtobufError, naming the message, for data that
    is not one."""
    cdef _Out out = _Out()
    _checked_write(out, m, data)
    return PyBytes_FromStringAndSize(<const char*>out.data, out.n)


cdef int _checked_write(_Out out, Message m, object data) except -1:
    try:
        _write(out, m, data)
    except ProtobufError:
        raise
    except (TypeError, OverflowError, ValueError) as e:
        raise ProtobufError(f"{m.name}: {e}") from None
    return 0


# -- the envelope ---------------------------------------------------------------------------------

MAGIC = b"k8s\x00"


def wrap(str api_version, str kind, bytes raw):
    """An object's bytes wrapped, with its apiVersion and kind: `k8s\\0` and a runtime.Unknown of
    the TypeMeta, the bytes, and empty contentEncoding and contentType."""
    cdef _Out out = _Out()
    cdef Py_ssize_t body
    out.raw(b"k8s\x00", 4)
    body = out.open(1)
    out.text(1, api_version)
    out.text(2, kind)
    out.close(body)
    out.blob(2, raw)
    out.text(3, "")
    out.text(4, "")
    return PyBytes_FromStringAndSize(<const char*>out.data, out.n)


cdef bint _find(const unsigned char* buf, Span outer, int wanted, Span* found) except -1:
    """The last length-delimited field numbered `wanted` in `outer` (False: none)."""
    cdef Py_ssize_t pos = outer.start
    cdef int number, wire
    cdef uint64_t value = 0
    cdef Span span
    cdef bint seen = False
    while pos < outer.end:
        _field(buf, outer.end, &pos, &number, &wire, &value, &span)
        if wire == LENGTH and number == wanted:
            found[0] = span
            seen = True
    return seen


# -- objects: the envelope and the message of their kind -------------------------------------------

cdef object _resolve = None  # (apiVersion, kind) -> the kind's Message, or None: set by `kinds`


def kinds(object resolve):
    """Where `encode_object` and `decode_object` find the message of a kind they have not met:
    `resolve(apiVersion, kind)` gives its Message, or None for a kind without one."""
    global _resolve
    _resolve = resolve
    global _last_meta, _last_kind
    _written.clear()
    _read_kinds.clear()
    _last_meta, _last_kind = None, None


@cython.final
cdef class _Kind:
    """A kind as objects of it are wrapped: its apiVersion, kind, message, and the envelope's
    bytes before the object (`k8s\\0` and the Unknown's TypeMeta)."""
    cdef object api_version
    cdef object kind
    cdef Message message
    cdef bytes head


cdef dict _written = {}  # kind -> the _Kind its objects were last written as
cdef dict _read_kinds = {}  # the bytes of a TypeMeta read -> (apiVersion, kind, Message or None)
cdef bytes _last_meta = None  # the TypeMeta read last, and its kind
cdef object _last_kind = None


cdef _Kind _kind_to_write(object api_version, object kind):
    cdef _Kind k = _Kind.__new__(_Kind)
    cdef _Out out
    cdef Py_ssize_t body
    found = _resolve(api_version, kind)
    if found is None:
        return None
    k.api_version, k.kind, k.message = api_version, kind, <Message>found
    out = _Out()
    out.raw(b"k8s\x00", 4)
    body = out.open(1)
    out.text(1, api_version)
    out.text(2, kind)
    out.close(body)
    k.head = PyBytes_FromStringAndSize(<const char*>out.data, out.n)
    if len(_written) >= 1024:
        _written.clear()
    _written[kind] = k
    return k


def encode_object(object data):
    """An object (its JSON shape, or a model), wrapped with the apiVersion and kind it holds; None
    for a kind without a message."""
    cdef _Kind k
    cdef _Out out
    cdef Py_ssize_t body
    if type(data) is dict:
        api_version = (<dict>data).get("apiVersion") or ""
        kind = (<dict>data).get("kind") or ""
    else:
        api_version = getattr(data, "apiVersion", None) or ""
        kind = getattr(data, "kind", None) or ""
    found = _written.get(kind)
    if found is not None and ((<_Kind>found).api_version is api_version or (<_Kind>found).api_version == api_version):
        k = <_Kind>found
    else:
        k = _kind_to_write(api_version, kind)
        if k is None:
            return None
    out = _take()
    try:
        out.raw(PyBytes_AS_STRING(k.head), PyBytes_GET_SIZE(k.head))
        body = out.open(2)
        _checked_write(out, k.message, data)
        out.close(body)
        out.raw(b"\x1a\x00\x22\x00", 4)  # empty contentEncoding and contentType
        return PyBytes_FromStringAndSize(<const char*>out.data, out.n)
    finally:
        _give(out)


def decode_object(bytes data):
    """A wrapped object in its JSON shape, apiVersion and kind set from the wrapper; ProtobufError
    for bytes that are not one, KeyError naming a kind without a message."""
    cdef const unsigned char* buf = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Span whole, type_meta, raw, span, found
    cdef Py_ssize_t pos = 4
    cdef int number, wire
    cdef uint64_t value = 0
    if PyBytes_GET_SIZE(data) < 4 or buf[0] != 107 or buf[1] != 56 or buf[2] != 115 or buf[3] != 0:
        raise ProtobufError("the data does not start with the protobuf prefix k8s\\x00")
    whole.start, whole.end = 4, PyBytes_GET_SIZE(data)
    type_meta.start = type_meta.end = raw.start = raw.end = 0
    while pos < whole.end:  # the last of each field counts, as proto readers take it
        _field(buf, whole.end, &pos, &number, &wire, &value, &span)
        if wire == LENGTH:
            if number == 1:
                type_meta = span
            elif number == 2:
                raw = span
    global _last_meta, _last_kind
    if (_last_meta is not None and PyBytes_GET_SIZE(_last_meta) == type_meta.end - type_meta.start
            and memcmp(PyBytes_AS_STRING(_last_meta), buf + type_meta.start, type_meta.end - type_meta.start) == 0):
        known = _last_kind  # objects mostly come as many of one kind
    else:
        meta = PyBytes_FromStringAndSize(<const char*>buf + type_meta.start, type_meta.end - type_meta.start)
        known = _read_kinds.get(meta)
        if known is None:
            api_version = _text(buf, found) if _find(buf, type_meta, 1, &found) else ""
            kind = _text(buf, found) if _find(buf, type_meta, 2, &found) else ""
            if not kind:
                raise ProtobufError("the object has no kind")
            known = (api_version, kind, _resolve(api_version, kind))
            if len(_read_kinds) >= 1024:
                _read_kinds.clear()
            _read_kinds[meta] = known
        _last_meta, _last_kind = meta, known
    api_version, kind, m = <tuple>known
    if m is None:
        raise KeyError(f"{api_version}, Kind={kind}")
    return _read(<Message>m, buf, raw.start, raw.end, {"apiVersion": api_version, "kind": kind})


def watch_frame(str event_type, bytes wrapped):
    """One frame of a protobuf watch stream: four bytes of length (big endian), then a WatchEvent
    of the event's type and its (wrapped) object in a RawExtension."""
    cdef _Out out = _Out()
    cdef Py_ssize_t body, size
    out.room(4)
    out.n = 4
    out.text(1, event_type)
    body = out.open(2)
    out.blob(1, wrapped)
    out.close(body)
    size = out.n - 4
    out.data[0] = <unsigned char>((size >> 24) & 0xFF)
    out.data[1] = <unsigned char>((size >> 16) & 0xFF)
    out.data[2] = <unsigned char>((size >> 8) & 0xFF)
    out.data[3] = <unsigned char>(size & 0xFF)
    return PyBytes_FromStringAndSize(<const char*>out.data, out.n)


cdef inline object _bytes_at(const unsigned char* buf, Span span):
    return PyBytes_FromStringAndSize(<const char*>buf + span.start, span.end - span.start)


def read_watch_frame(bytes frame):
    """The type and wrapped object of one frame's event (without its length prefix)."""
    cdef const unsigned char* buf = <const unsigned char*>PyBytes_AS_STRING(frame)
    cdef Span whole, raw_extension, found
    whole.start, whole.end = 0, PyBytes_GET_SIZE(frame)
    event_type = _text(buf, found) if _find(buf, whole, 1, &found) else ""
    wrapped = b""
    if _find(buf, whole, 2, &raw_extension) and _find(buf, raw_extension, 1, &found):
        wrapped = _bytes_at(buf, found)
    return event_type, wrapped
