"""src/core/schema.h against the installed executorch package's schemas.

pterun reads .pte and .ptd files with FlatBuffers field slots typed by hand
(src/core/schema.h). Each constant there names, in its comment, the schema
fields it is the slot of (``Table.field: type``; ``flat_tensor.`` for
flat_tensor.fbs) or the union/enum member it is the value of. This test parses
program.fbs, flat_tensor.fbs and scalar_type.fbs from the executorch package
(a small parser of the .fbs text; no flatc needed) and checks

* every slot: 4 + 2 * the field's id (a union field takes two ids: its
  ``_type`` field, then the value), and the field's type;
* every union tag and enum value;
* that the reader code (src/core/*.c) reads each slot with an accessor of the
  field's width (``pt_fb_u32`` for a uint, ``pt_fb_get_vector(.., 8, ..)`` for
  a ``[int64]``, ...);
* that pterun's dtype numbers (include/pterun/tensor.h) are ScalarType's.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCHEMA_H = REPO / "src" / "core" / "schema.h"

# FlatBuffers scalar type aliases -> canonical name and width in bytes.
SCALARS = {
    "bool": ("bool", 1),
    "byte": ("int8", 1),
    "int8": ("int8", 1),
    "ubyte": ("uint8", 1),
    "uint8": ("uint8", 1),
    "short": ("int16", 2),
    "int16": ("int16", 2),
    "ushort": ("uint16", 2),
    "uint16": ("uint16", 2),
    "int": ("int32", 4),
    "int32": ("int32", 4),
    "uint": ("uint32", 4),
    "uint32": ("uint32", 4),
    "float": ("float32", 4),
    "float32": ("float32", 4),
    "long": ("int64", 8),
    "int64": ("int64", 8),
    "ulong": ("uint64", 8),
    "uint64": ("uint64", 8),
    "double": ("float64", 8),
    "float64": ("float64", 8),
}


@dataclass
class Field:
    name: str
    id: int
    type: str  # as written, namespace stripped: "uint", "[int]", "Tensor"


@dataclass
class Schema:
    tables: dict[str, dict[str, Field]] = field(default_factory=dict)
    unions: dict[str, list[str]] = field(default_factory=dict)  # members, NONE first
    enums: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)

    def merge(self, other: Schema) -> None:
        self.tables.update(other.tables)
        self.unions.update(other.unions)
        self.enums.update(other.enums)


def strip_ns(t: str) -> str:
    """``executorch_flatbuffer.ScalarType`` -> ``ScalarType`` (inside [] too)."""
    return re.sub(r"[A-Za-z_][\w]*\.", "", t)


def parse_fbs(text: str) -> Schema:
    """Tables, unions and enums of one .fbs file (the subset ExecuTorch uses:
    no structs with fields we read, no nested namespaces in a file)."""
    text = re.sub(r"//[^\n]*", "", text)
    s = Schema()
    for kind, name, base, body in re.findall(
        r"\b(table|struct|union|enum)\s+(\w+)\s*(?::\s*(\w+))?\s*\{([^}]*)\}", text
    ):
        if kind in ("table", "struct"):
            fields: dict[str, Field] = {}
            next_id = 0
            for decl in filter(None, (d.strip() for d in body.split(";"))):
                m = re.match(
                    r"(\w+)\s*:\s*([^=(]+?)\s*(?:=\s*[^(]+?)?\s*(?:\((.*)\))?$", decl
                )
                assert m is not None, f"{name}: cannot parse field {decl!r}"
                fname, ftype, attrs = (
                    m.group(1),
                    strip_ns(m.group(2).strip()),
                    m.group(3) or "",
                )
                idm = re.search(r"\bid\s*:\s*(\d+)", attrs)
                fid = int(idm.group(1)) if idm else next_id
                fields[fname] = Field(fname, fid, ftype)
                next_id = fid + 1
            s.tables[name] = fields
        elif kind == "union":
            s.unions[name] = ["NONE"] + [
                strip_ns(m.strip()) for m in body.split(",") if m.strip()
            ]
        else:
            values: dict[str, int] = {}
            v = 0
            for item in filter(None, (i.strip() for i in body.split(","))):
                if "=" in item:
                    n, val = (x.strip() for x in item.split("="))
                    v = int(val, 0)
                else:
                    n = item
                values[n] = v
                v += 1
            s.enums[name] = (base, values)
    # A union field occupies two ids: `<name>_type` (the tag), then the value.
    for fields in s.tables.values():
        for f in list(fields.values()):
            if f.type in s.unions:
                shift = [g for g in fields.values() if g.id >= f.id and g is not f]
                for g in shift:
                    g.id += 1
                fields[f.name + "_type"] = Field(f.name + "_type", f.id, f.type)
                f.id += 1
    return s


@pytest.fixture(scope="module")
def schemas() -> dict[str, Schema]:
    spec = importlib.util.find_spec("executorch")
    assert spec is not None and spec.submodule_search_locations, (
        "the executorch package is not installed (tools/requirements-export.txt)"
    )
    root = Path(next(iter(spec.submodule_search_locations)))
    files = {
        "program": root / "schema" / "program.fbs",
        "flat_tensor": root
        / "extension"
        / "flat_tensor"
        / "serialize"
        / "flat_tensor.fbs",
    }
    scalar = root / "schema" / "scalar_type.fbs"
    for p in [*files.values(), scalar]:
        assert p.is_file(), f"{p}: not in the installed executorch package"
    out: dict[str, Schema] = {}
    for key, p in files.items():
        s = parse_fbs(p.read_text())
        s.merge(parse_fbs(scalar.read_text()))
        out[key] = s
    return out


@dataclass
class Constant:
    name: str
    value: int
    claims: list[str]  # "Table.field: type" or "Union.Member"


def schema_constants() -> list[Constant]:
    text = SCHEMA_H.read_text()
    out = []
    for name, value, comment in re.findall(
        r"\b(PT_\w+)\s*=\s*(\d+)\s*,?\s*/\*(.*?)\*/", text, flags=re.DOTALL
    ):
        claims = [c.strip() for c in " ".join(comment.split()).split(",") if c.strip()]
        out.append(Constant(name, int(value), claims))
    return out


def resolve(claim: str, schemas: dict[str, Schema]) -> tuple[Schema, str]:
    if claim.startswith("flat_tensor."):
        return schemas["flat_tensor"], claim[len("flat_tensor.") :]
    return schemas["program"], claim


def test_every_constant_is_annotated() -> None:
    text = SCHEMA_H.read_text()
    declared = set(re.findall(r"^\s*(PT_\w+)\s*=", text, flags=re.MULTILINE))
    annotated = {c.name for c in schema_constants()}
    assert declared, "no constants found in schema.h"
    assert declared == annotated, (
        f"without a schema comment: {sorted(declared - annotated)}"
    )


def test_slots_and_types(schemas: dict[str, Schema]) -> None:
    errors = []
    checked = 0
    for c in schema_constants():
        for claim in c.claims:
            s, ref = resolve(claim, schemas)
            if ":" not in ref:
                continue  # a union/enum value: test_union_and_enum_values
            path, want_type = (x.strip() for x in ref.split(":", 1))
            table, fname = path.split(".")
            f = s.tables.get(table, {}).get(fname)
            if f is None:
                errors.append(f"{c.name}: {claim}: no field {path} in the schema")
                continue
            slot = 4 + 2 * f.id
            if slot != c.value:
                errors.append(
                    f"{c.name} = {c.value}: {path} has id {f.id}, slot {slot}"
                )
            if canon(f.type) != canon(want_type):
                errors.append(
                    f"{c.name}: {path} is {f.type} in the schema, {want_type} here"
                )
            checked += 1
    assert not errors, "\n".join(errors)
    assert checked >= 80, f"only {checked} field claims checked"


def test_union_and_enum_values(schemas: dict[str, Schema]) -> None:
    errors = []
    for c in schema_constants():
        for claim in c.claims:
            s, ref = resolve(claim, schemas)
            if ":" in ref:
                continue
            kind, member = ref.split(".")
            if kind in s.unions:
                members = s.unions[kind]
                if member not in members:
                    errors.append(f"{c.name}: {kind} has no member {member}")
                elif members.index(member) != c.value:
                    errors.append(
                        f"{c.name} = {c.value}: {ref} is {members.index(member)}"
                    )
            elif kind in s.enums:
                v = s.enums[kind][1].get(member)
                if v != c.value:
                    errors.append(f"{c.name} = {c.value}: {ref} is {v}")
            else:
                errors.append(f"{c.name}: no union or enum {kind}")
    assert not errors, "\n".join(errors)
    # every union member has its tag here
    tags = {cl for c in schema_constants() for cl in c.claims if ":" not in cl}
    for union in ("KernelTypes", "InstructionArguments"):
        for m in schemas["program"].unions[union]:
            assert f"{union}.{m}" in tags, f"schema.h has no tag for {union}.{m}"


def canon(t: str) -> str:
    t = strip_ns(t.strip())
    if t.startswith("[") and t.endswith("]"):
        return "[" + canon(t[1:-1]) + "]"
    return SCALARS.get(t, (t, 0))[0]


def width(t: str, s: Schema) -> tuple[str, int]:
    """("scalar", bytes), ("table", 4), ("string", 4), ("vector", elem bytes) or
    ("union_tag", 1) for a field type."""
    t = strip_ns(t.strip())
    if t.startswith("["):
        inner = t[1:-1]
        k, w = width(inner, s)
        return ("vector", w if k == "scalar" else 4)
    if t in SCALARS:
        return ("scalar", SCALARS[t][1])
    if t in s.enums:
        return ("scalar", SCALARS[s.enums[t][0]][1])
    if t == "string":
        return ("string", 4)
    if t in s.unions:
        return ("union", 4)
    return ("table", 4)


# accessor -> what it reads: ("scalar", width) / ("table",) / ...
ACCESSORS = {
    "u8": ("scalar", 1),
    "i8": ("scalar", 1),
    "i32": ("scalar", 4),
    "u32": ("scalar", 4),
    "i64": ("scalar", 8),
    "u64": ("scalar", 8),
    "f64": ("scalar", 8),
    "get_table": ("table", 4),
    "get_string": ("string", 4),
}


def calls(src: str) -> list[tuple[str, list[str]]]:
    """(accessor, argument texts) of every pt_fb_<accessor>(...) call."""
    out = []
    for m in re.finditer(r"\bpt_fb_(\w+)\(", src):
        depth, k, args, cur = 1, m.end(), [], ""
        while k < len(src) and depth:
            ch = src[k]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            if depth == 1 and ch == ",":
                args.append(cur.strip())
                cur = ""
            elif depth:
                cur += ch
            k += 1
        args.append(cur.strip())
        out.append((m.group(1), args))
    return out


def test_reader_code_uses_each_slot_with_its_width(schemas: dict[str, Schema]) -> None:
    by_name = {c.name: c for c in schema_constants()}
    errors = []
    checked = 0
    for path in sorted((REPO / "src" / "core").glob("*.c")):
        for acc, args in calls(path.read_text()):
            if len(args) < 2 or args[1] not in by_name:
                continue
            c = by_name[args[1]]
            fields = [cl for cl in c.claims if ":" in cl]
            if not fields:
                continue
            kinds = set()
            for cl in fields:
                s, ref = resolve(cl, schemas)
                table, fname = ref.split(":", 1)[0].strip().split(".")
                f = s.tables[table][fname]
                if fname.endswith("_type") and f.type in s.unions:
                    kinds.add(("scalar", 1))  # a union's tag: a ubyte
                else:
                    kinds.add(width(f.type, s))
            if acc in ACCESSORS:
                got = ACCESSORS[acc]
                # a union's value is a table
                ok = got in kinds or (got == ("table", 4) and ("union", 4) in kinds)
            elif acc == "get_vector" and len(args) >= 3 and args[2].isdigit():
                got = ("vector", int(args[2]))
                ok = got in kinds
            elif acc == "check_scalar" and len(args) >= 3 and args[2].isdigit():
                got = ("scalar", int(args[2]))
                ok = got in kinds
            else:
                continue
            checked += 1
            if not ok:
                errors.append(
                    f"{path.name}: pt_fb_{acc}(.., {c.name}, ..) reads {got}; "
                    f"the schema has {sorted(kinds)} ({', '.join(fields)})"
                )
    assert not errors, "\n".join(errors)
    assert checked >= 60, f"only {checked} reads checked"


def test_dtypes_are_scalar_types(schemas: dict[str, Schema]) -> None:
    header = (REPO / "include" / "pterun" / "tensor.h").read_text()
    ours = {int(v): n for n, v in re.findall(r"X\((\w+), (\d+), \"", header)}
    scalar = schemas["program"].enums["ScalarType"][1]
    names = {
        "BYTE": "U8", "CHAR": "I8", "SHORT": "I16", "INT": "I32", "LONG": "I64",
        "HALF": "F16", "FLOAT": "F32", "DOUBLE": "F64", "BOOL": "BOOL", "QINT8": "QINT8",
        "QUINT8": "QUINT8", "QINT32": "QINT32", "BFLOAT16": "BF16", "QUINT4X2": "QUINT4X2",
        "QUINT2X4": "QUINT2X4", "BITS16": "BITS16", "FLOAT8E5M2": "F8E5M2",
        "FLOAT8E4M3FN": "F8E4M3FN", "FLOAT8E5M2FNUZ": "F8E5M2FNUZ",
        "FLOAT8E4M3FNUZ": "F8E4M3FNUZ", "UINT16": "U16", "UINT32": "U32", "UINT64": "U64",
    }  # fmt: skip
    errors = [
        f"ScalarType.{n} = {v}: pterun has {ours.get(v)} there, expected {names.get(n)}"
        for n, v in scalar.items()
        if ours.get(v) != names.get(n)
    ]
    assert not errors, "\n".join(errors)
