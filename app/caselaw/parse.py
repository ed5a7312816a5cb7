"""Rechtspraak open-data records (``<open-rechtspraak>``): metadata, summary, body, status.

One record is RDF metadata (``rdf:Description``), an optional ``inhoudsindicatie`` and an
optional body, ``uitspraak`` or ``conclusie``. The same parser serves ingestion (sections
for the chunker, metadata for ``case_law``) and the citation gate (is this ECLI still good
law?), so the status markers are read with care:

- ``dcterms:isReplacedBy`` appears on a voided ECLI. It is tri-state: absent (None),
  present but empty (""), or a value. Present-but-empty is NOT "not replaced": the gate
  treats it as unverifiable.
- The schema has no withdrawal element today; anything that looks like one (an element,
  label or attribute saying "ingetrokken", "intrekking", "withdrawn", "vervallen") is read
  tolerantly, with the same tri-state reading.
- ``dcterms:relation`` of type ``vervallenverklaring`` towards a later instance: declared
  lapsed. A relation towards a later instance whose ``psi:gevolg`` contains "vernietiging":
  set aside by that later decision. The direction matters: the same kind of relation
  pointing at an EARLIER instance means this decision set the other one aside.

Real files are not always well formed (cp1252/cp437 bytes in files declared UTF-8, a newline
before the XML declaration). Each recovery that was needed is listed in ``warnings``; input
that cannot be read at all raises ``ExtractionError`` with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from lxml import etree

from app.caselaw.xmlbytes import LENIENT_WARNING, parse_xml
from app.ecli import extract_eclis, normalize_ecli
from app.ingest.types import ExtractedDocument, ExtractionError, Section

MIME_TYPE = "application/xml"

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
PSI = "http://psi.rechtspraak.nl/"
ECLI_NS = "https://e-justice.europa.eu/ecli"

BodyKind = Literal["uitspraak", "conclusie"]

# Words that mark an explicit withdrawal when they appear in an element name, its
# rdfs:label or an attribute name of the metadata.
_WITHDRAWAL_WORDS = ("ingetrokken", "intrekking", "withdrawn", "vervallen")
_TRUE_WORDS = frozenset({"true", "1", "ja", "j", "yes", "y", "waar"})
_FALSE_WORDS = frozenset({"false", "0", "nee", "n", "no", "onwaar"})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


# --- the record -----------------------------------------------------------------------


@dataclass(frozen=True)
class Relation:
    """One ``dcterms:relation``: a formal link to another decision."""

    target: str | None  # the other decision's ECLI
    type: str | None  # last segment of psi:type, e.g. "cassatie", "vervallenverklaring"
    aanleg: str | None  # "eerdereAanleg" (an earlier instance) or "latereAanleg"
    gevolg: str | None  # outcome, e.g. "(Gedeeltelijke) vernietiging en zelf afgedaan";
    # None: attribute absent, "": present but empty
    label: str | None  # rdfs:label, e.g. "Formele relatie"
    text: str  # human text, e.g. "Sprongcassatie: ECLI:NL:HR:2013:477, ..."

    @property
    def towards_later_instance(self) -> bool:
        # An unknown direction counts as "later": for a status marker that errs on the side
        # of "this decision may have been affected" (fail closed).
        return (self.aanleg or "").lower() != "eerdereaanleg"

    @property
    def sets_aside_this(self) -> bool:
        return self.towards_later_instance and "vernietiging" in (self.gevolg or "").lower()

    @property
    def declares_this_lapsed(self) -> bool:
        return self.towards_later_instance and (self.type or "").lower() == "vervallenverklaring"

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "type": self.type,
            "aanleg": self.aanleg,
            "gevolg": self.gevolg,
            "label": self.label,
            "text": self.text,
        }


@dataclass
class RechtspraakRecord:
    ecli: str
    court: str | None = None
    decision_date: date | None = None
    publication_date: date | None = None
    type: str | None = None  # "Uitspraak" or "Conclusie"
    procedures: list[str] = field(default_factory=list)
    areas_of_law: list[str] = field(default_factory=list)
    zaaknummers: list[str] = field(default_factory=list)
    spatial: str | None = None  # zittingsplaats
    title: str | None = None  # dcterms:title of the HTML rendering, when given
    inhoudsindicatie: str = ""
    body_kind: BodyKind | None = None
    sections: list[Section] = field(default_factory=list)  # body only, in document order
    relations: list[Relation] = field(default_factory=list)
    replaces: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)  # wetsverwijzingen
    vindplaatsen: list[str] = field(default_factory=list)
    # tri-state markers: None = element absent, "" = present but empty, else the value
    is_replaced_by: str | None = None
    withdrawal_marker: str | None = None
    withdrawal_marker_name: str | None = None  # which element/attribute carried it
    warnings: list[str] = field(default_factory=list)  # recoveries applied while reading

    # --- derived status --------------------------------------------------------------

    @property
    def withdrawn(self) -> bool | None:
        """True/False from an explicit marker; None when absent, empty or unreadable."""
        return _withdrawal_value(self.withdrawal_marker)

    @property
    def replaced(self) -> bool:
        return bool(self.is_replaced_by)

    @property
    def set_aside_by(self) -> str | None:
        hit = next((r for r in self.relations if r.sets_aside_this), None)
        return hit.target if hit is not None else None

    @property
    def set_aside(self) -> bool:
        return any(r.sets_aside_this for r in self.relations)

    @property
    def vervallen(self) -> bool:
        return any(r.declares_this_lapsed for r in self.relations)

    @property
    def vervallen_by(self) -> str | None:
        hit = next((r for r in self.relations if r.declares_this_lapsed), None)
        return hit.target if hit is not None else None

    @property
    def marker_errors(self) -> dict[str, str]:
        """Status markers that are present but empty or unreadable, by marker name."""
        errors: dict[str, str] = {}
        if self.is_replaced_by == "":
            errors["is_replaced_by"] = "empty isReplacedBy marker"
        marker = self.withdrawal_marker
        if marker is not None:
            name = self.withdrawal_marker_name or "withdrawal"
            if not marker.strip():
                errors["withdrawn"] = f"empty withdrawal marker ({name})"
            elif _withdrawal_value(marker) is None:
                errors["withdrawn"] = f"unreadable withdrawal marker ({name}={marker[:60]!r})"
        for rel in self.relations:
            if rel.towards_later_instance and rel.gevolg is not None and not rel.gevolg.strip():
                errors["set_aside"] = f"empty gevolg marker on the relation to {rel.target}"
                break
        return errors

    @property
    def recovered_leniently(self) -> bool:
        return any(w.startswith(LENIENT_WARNING) for w in self.warnings)

    @property
    def body_text(self) -> str:
        return "\n\n".join(_section_block(s) for s in self.sections if s.text or s.title)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able metadata (what ingestion stores with the document)."""
        status = assess(self)
        return {
            "ecli": self.ecli,
            "court": self.court,
            "decision_date": self.decision_date.isoformat() if self.decision_date else None,
            "publication_date": (
                self.publication_date.isoformat() if self.publication_date else None
            ),
            "type": self.type,
            "procedures": list(self.procedures),
            "procedure": "; ".join(self.procedures) or None,
            "areas_of_law": list(self.areas_of_law),
            "area_of_law": "; ".join(self.areas_of_law) or None,
            "zaaknummers": list(self.zaaknummers),
            "spatial": self.spatial,
            "body_kind": self.body_kind,
            "relations": [r.as_dict() for r in self.relations],
            "replaces": list(self.replaces),
            "references": list(self.references),
            "vindplaatsen": list(self.vindplaatsen),
            "markers": {
                "is_replaced_by": self.is_replaced_by,
                "withdrawal_marker": self.withdrawal_marker,
                "withdrawal_marker_name": self.withdrawal_marker_name,
                "withdrawn": self.withdrawn,
                "set_aside_by": self.set_aside_by,
                "set_aside": self.set_aside,
                "vervallen": self.vervallen,
                "vervallen_by": self.vervallen_by,
                "errors": self.marker_errors,
            },
            "liveness": {
                "live": status.live,
                "code": status.code,
                "reason": status.reason,
                "by": status.by,
            },
            "warnings": list(self.warnings),
        }


def _withdrawal_value(marker: str | None) -> bool | None:
    if marker is None:
        return None
    value = marker.strip().lower()
    if not value:
        return None
    if value in _TRUE_WORDS or any(w in value for w in _WITHDRAWAL_WORDS):
        return True
    if value in _FALSE_WORDS:
        return False
    # a date or an ECLI in a withdrawal marker says when / by what it was withdrawn
    if _ISO_DATE.match(value) or extract_eclis(marker):
        return True
    return None


LivenessCode = Literal["live", "withdrawn", "replaced", "vervallen", "set_aside", "unverifiable"]


@dataclass(frozen=True)
class Liveness:
    live: bool
    code: LivenessCode
    reason: str
    by: str | None = None  # the ECLI that replaced, voided or set aside this decision


def assess(record: RechtspraakRecord) -> Liveness:
    """Is this decision still good law, as far as its own record says?

    A definite "not live" wins over an unreadable marker (it is the more useful reason);
    an unreadable marker with nothing else against the decision still means not live, and
    so does a record that only a lenient parser could read (it may have lost a marker).
    """
    if record.withdrawn is True:
        return Liveness(False, "withdrawn", "ingetrokken")
    if record.is_replaced_by:
        replaced_by = record.is_replaced_by
        return Liveness(False, "replaced", f"vervangen door {replaced_by}", replaced_by)
    if record.vervallen:
        lapsed_by = record.vervallen_by
        reason = f"vervallen verklaard door {lapsed_by}" if lapsed_by else "vervallen verklaard"
        return Liveness(False, "vervallen", reason, lapsed_by)
    if record.set_aside:
        set_aside_by = record.set_aside_by
        reason = f"vernietigd door {set_aside_by}" if set_aside_by else "vernietigd"
        return Liveness(False, "set_aside", reason, set_aside_by)
    errors = record.marker_errors
    if errors:
        return Liveness(False, "unverifiable", "unverifiable: " + "; ".join(errors.values()))
    if record.recovered_leniently:
        return Liveness(
            False, "unverifiable", "unverifiable: the record is malformed XML and may be incomplete"
        )
    return Liveness(True, "live", "live")


def liveness(record: RechtspraakRecord) -> tuple[bool, str, str | None]:
    """(live, reason, the ECLI that replaced or set it aside, when known)."""
    result = assess(record)
    return result.live, result.reason, result.by


# --- element helpers ------------------------------------------------------------------


def _local(el: etree._Element) -> str:
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def _children(el: etree._Element) -> Iterator[etree._Element]:
    for child in el:
        if isinstance(child.tag, str):
            yield child


def _attr(el: etree._Element, namespace: str, local: str) -> str | None:
    value = el.get(f"{{{namespace}}}{local}")
    if value is not None:
        return value
    # namespace prefixes vary between exports; fall back to the local name
    for key, val in el.attrib.items():
        if str(key).rsplit("}", 1)[-1] == local:
            return str(val)
    return None


def _clean(text: str) -> str:
    return " ".join(text.split())


def _inline(el: etree._Element) -> str:
    """Text of an element as one line: <?linebreak?> is a space, footnote refs vanish."""
    parts: list[str] = [el.text or ""]
    for child in el:
        if isinstance(child, etree._ProcessingInstruction):
            parts.append(" ")
        elif not isinstance(child.tag, str) or _local(child) == "footnote-ref":
            pass  # comments vanish; footnote references are markup, not prose
        elif _local(child) == "nr":
            parts.append(_inline(child) + " ")
        else:
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return _clean("".join(parts))


_CONTAINERS = frozenset(
    {
        "parablock",
        "section",
        "itemizedlist",
        "orderedlist",
        "listitem",
        "uitspraak.info",
        "conclusie.info",
        "informaltable",
        "tgroup",
        "thead",
        "tbody",
        "tfoot",
        "textobject",
        "blockquote",
        "uitspraak",
        "conclusie",
        "inhoudsindicatie",
        "footnote",
    }
)
_SKIPPED = frozenset({"mediaobject", "imageobject", "imagedata", "colspec", "footnote-ref"})


def _blocks(el: etree._Element) -> list[str]:
    """Paragraph strings of a body element, in reading order."""
    name = _local(el)
    if name in _SKIPPED:
        return []
    if name == "row":
        cells = [_inline(c) for c in _children(el)]
        line = " | ".join(c for c in cells if c)
        return [line] if line else []
    if name == "paragroup":
        # <nr>3.</nr><para>De beoordeling</para>: the number reads as part of the text
        number = ""
        out: list[str] = []
        for child in _children(el):
            if _local(child) == "nr" and not out and not number:
                number = _inline(child)
                continue
            out.extend(_blocks(child))
        if number:
            if out:
                out[0] = f"{number} {out[0]}"
            else:
                out = [number]
        return out
    if name == "footnote":
        inner = [b for c in _children(el) if _local(c) != "nr" for b in _blocks(c)]
        label = next((_inline(c) for c in _children(el) if _local(c) == "nr"), "")
        if label and inner:
            inner[0] = f"[{label}] {inner[0]}"
        return inner
    kids = list(_children(el))
    if name in _CONTAINERS or any(_local(k) in _CONTAINERS or _local(k) == "para" for k in kids):
        out = []
        lead = _clean(el.text or "")
        if lead:
            out.append(lead)
        for child in kids:
            out.extend(_blocks(child))
            tail = _clean(child.tail or "")
            if tail:
                out.append(tail)
        return out
    line = _inline(el)
    return [line] if line else []


def _section_block(section: Section) -> str:
    if section.title and section.text:
        return f"{section.title}\n\n{section.text}"
    return section.title or section.text


_TOP_NUMBER = re.compile(r"^(\d{1,2})\.(?!\d)\s*(.*)$", re.DOTALL)
_HEADING_MAX = 80


def _numbered_sections(blocks: list[str], kind: str) -> list[Section]:
    """Records without <section>: a new section at each next top-level number (1., 2., ...).

    Only the NEXT number opens a section, so lists inside a section ("1. ... 2. ...") that
    do not continue the top-level count stay where they are.
    """
    sections: list[Section] = []
    title = ""
    current: list[str] = []
    expected = 1

    def flush() -> None:
        if current or title:
            path = f"{kind} / {title}" if title else kind
            sections.append(Section(title=title, text="\n\n".join(current), path=path))

    for block in blocks:
        match = _TOP_NUMBER.match(block)
        if match and int(match.group(1)) == expected:
            flush()
            current = []
            expected += 1
            rest = match.group(2).strip()
            # a short line without a full stop is a heading ("3. De beoordeling")
            if rest and len(block) <= _HEADING_MAX and not rest.endswith((".", ":", ";")):
                title = block
            else:
                title = match.group(1)
                current.append(block)
        else:
            current.append(block)
    flush()
    return sections


def _body_sections(body: etree._Element, kind: str) -> list[Section]:
    kids = list(_children(body))
    if not any(_local(k) == "section" for k in kids):
        return _numbered_sections(_blocks(body), kind)
    sections: list[Section] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            sections.append(Section(title="", text="\n\n".join(pending), path=kind))
            pending.clear()

    for child in kids:
        if _local(child) != "section":
            pending.extend(_blocks(child))
            continue
        flush()
        title = ""
        blocks: list[str] = []
        for part in _children(child):
            if _local(part) == "title" and not title and not blocks:
                title = _inline(part)
            else:
                blocks.extend(_blocks(part))
        path = f"{kind} / {title}" if title else kind
        sections.append(Section(title=title, text="\n\n".join(blocks), path=path))
    flush()
    return sections


# --- metadata -------------------------------------------------------------------------


def _texts(els: Iterable[etree._Element]) -> list[str]:
    return [t for t in (_inline(e) for e in els) if t]


def _parse_date(value: str | None, what: str, warnings: list[str]) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError:
        warnings.append(f"unreadable {what} {value.strip()[:40]!r}")
        return None


def _last_segment(uri: str | None) -> str | None:
    if uri is None:
        return None
    return uri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or None


def _relation(el: etree._Element) -> Relation:
    text = _inline(el)
    target_raw = _attr(el, ECLI_NS, "resourceIdentifier")
    target = normalize_ecli(target_raw) if target_raw else None
    if target is None:
        found = extract_eclis(target_raw or "") or extract_eclis(text)
        target = found[0] if found else (target_raw.strip() if target_raw else None)
    gevolg_raw = _attr(el, PSI, "gevolg")
    gevolg: str | None = None
    if gevolg_raw is not None:
        # "http://psi.rechtspraak.nl/gevolg#(Gedeeltelijke) vernietiging en zelf afgedaan"
        gevolg = gevolg_raw.split("#", 1)[1] if "#" in gevolg_raw else gevolg_raw
        gevolg = gevolg.strip()
    return Relation(
        target=target,
        type=_last_segment(_attr(el, PSI, "type")),
        aanleg=_last_segment(_attr(el, PSI, "aanleg")),
        gevolg=gevolg,
        label=_attr(el, RDFS, "label"),
        text=text,
    )


def _mentions_withdrawal(value: str | None) -> bool:
    low = (value or "").lower()
    return any(w in low for w in _WITHDRAWAL_WORDS)


def _withdrawal_markers(
    root: etree._Element, descriptions: Sequence[etree._Element]
) -> Iterator[tuple[str, str]]:
    """Every (marker value, where it was found), on the root and in every description."""
    for attr_holder in (root, *descriptions):
        for key, value in attr_holder.attrib.items():
            local = str(key).rsplit("}", 1)[-1]
            status_like = local.lower() in ("status", "state")
            if _mentions_withdrawal(local) or (status_like and _mentions_withdrawal(str(value))):
                yield str(value), f"@{local}"
    for description in descriptions:
        for el in _children(description):
            local = _local(el)
            if local in ("relation", "isReplacedBy"):
                continue  # read as relations / isReplacedBy
            label = _attr(el, RDFS, "label")
            if _mentions_withdrawal(local) or _mentions_withdrawal(label):
                value = _inline(el)
                if not value:
                    value = el.get("value") or el.get("waarde") or ""
                yield value, local
            elif local.lower() in ("status", "state") and _mentions_withdrawal(_inline(el)):
                yield _inline(el), local  # <psi:status>ingetrokken</psi:status>
            for key, value in el.attrib.items():
                attr_local = str(key).rsplit("}", 1)[-1]
                if _mentions_withdrawal(attr_local):
                    yield str(value), f"{local}@{attr_local}"


def _withdrawal_marker(
    root: etree._Element, descriptions: Sequence[etree._Element]
) -> tuple[str | None, str | None]:
    """(marker value, where it was found); (None, None) when no marker exists. Of several,
    one that says withdrawn wins, then one that cannot be read (the record is then held),
    then the first: a second marker saying "ja" after a "nee" is not lost."""
    found = list(_withdrawal_markers(root, descriptions))
    if not found:
        return None, None
    readings = [_withdrawal_value(value) for value, _ in found]
    for wanted in (True, None):
        for (value, where), reading in zip(found, readings, strict=True):
            if reading is wanted:
                return value, where
    return found[0]


def _find_body(root: etree._Element) -> tuple[BodyKind | None, etree._Element | None]:
    for child in _children(root):
        name = _local(child)
        if name == "uitspraak":
            return "uitspraak", child
        if name == "conclusie":
            return "conclusie", child
    return None, None


def parse_rechtspraak(data: bytes) -> RechtspraakRecord:
    """One open-data record. Raises ExtractionError when it cannot be read as one."""
    try:
        return _parse_record(data)
    except ExtractionError:
        raise
    except (etree.LxmlError, ValueError, RecursionError, MemoryError) as exc:
        # Whatever a hostile or broken file provokes deep in lxml must reach the ingest
        # report (or the gate's "unverifiable") as a reason, never as a crash.
        raise ExtractionError(f"unreadable record: {type(exc).__name__}: {exc}") from exc


def _parse_record(data: bytes) -> RechtspraakRecord:
    root, warnings = parse_xml(data)
    descriptions = list(root.iter(f"{{{RDF}}}Description"))
    if not descriptions:
        raise ExtractionError(
            f"not a Rechtspraak open-data record: no rdf:Description in <{_local(root)}>"
        )
    meta = descriptions[0]
    by_name: dict[str, list[etree._Element]] = {}
    for el in _children(meta):
        by_name.setdefault(_local(el), []).append(el)

    identifiers = _texts(by_name.get("identifier", []))
    ecli = next((e for e in (normalize_ecli(i) for i in identifiers) if e), None)
    if ecli is None:
        shown = identifiers[0][:60] if identifiers else "nothing"
        raise ExtractionError(f"no valid ECLI in dcterms:identifier (found {shown!r})")

    record = RechtspraakRecord(ecli=ecli, warnings=warnings)
    record.court = next(iter(_texts(by_name.get("creator", []))), None)
    record.decision_date = _parse_date(
        next(iter(_texts(by_name.get("date", []))), None), "decision date", warnings
    )
    record.publication_date = _parse_date(
        next(iter(_texts(by_name.get("issued", []))), None), "publication date", warnings
    )
    record.type = next(iter(_texts(by_name.get("type", []))), None)
    record.procedures = _texts(by_name.get("procedure", []))
    record.areas_of_law = _texts(by_name.get("subject", []))
    # kept as published: "AWB 99/611, 99/612 en 99/613" is one case number field
    record.zaaknummers = _texts(by_name.get("zaaknummer", []))
    record.spatial = next(iter(_texts(by_name.get("spatial", []))), None)
    record.replaces = _texts(by_name.get("replaces", []))
    record.references = _texts(by_name.get("references", []))
    record.vindplaatsen = [
        t for v in by_name.get("hasVersion", []) for t in _texts(v.iter("{*}li"))
    ]
    record.relations = [_relation(el) for el in by_name.get("relation", [])]

    # in any description: a replacement stated in a second one still replaces
    replaced = [el for d in descriptions for el in _children(d) if _local(el) == "isReplacedBy"]
    if replaced:
        values = [_inline(el) or (el.get(f"{{{RDF}}}resource") or "").strip() for el in replaced]
        record.is_replaced_by = next((v for v in values if v), "")
    record.withdrawal_marker, record.withdrawal_marker_name = _withdrawal_marker(
        root, descriptions
    )

    for extra in descriptions[1:]:
        titles = [t for t in _texts(extra.iter("{*}title")) if t]
        if titles and record.title is None:
            record.title = titles[0]

    inh = next((c for c in _children(root) if _local(c) == "inhoudsindicatie"), None)
    if inh is not None:
        record.inhoudsindicatie = "\n\n".join(_blocks(inh))
    record.body_kind, body = _find_body(root)
    if body is not None:
        record.sections = [s for s in _body_sections(body, record.body_kind or "") if s.text]
    return record


# --- for the ingest extractor -----------------------------------------------------------


def document_title(record: RechtspraakRecord) -> str:
    details = ", ".join(
        p for p in (record.court, record.decision_date and record.decision_date.isoformat()) if p
    )
    return f"{record.ecli} ({details})" if details else record.ecli


def extract_rechtspraak(data: bytes) -> ExtractedDocument:
    """The record as text and sections for chunking, its metadata for ``case_law``.

    A metadata-only record (e.g. a voided ECLI) yields a document without text; its
    status markers still matter to ingestion, so it is not an error here.
    """
    record = parse_rechtspraak(data)
    sections: list[Section] = []
    if record.inhoudsindicatie:
        sections.append(
            Section(title="Inhoudsindicatie", text=record.inhoudsindicatie, path="inhoudsindicatie")
        )
    sections.extend(record.sections)
    text = "\n\n".join(_section_block(s) for s in sections)
    warnings = list(record.warnings)
    if not text.strip():
        warnings.append("metadata only: no inhoudsindicatie and no body")
    return ExtractedDocument(
        text=text,
        mime_type=MIME_TYPE,
        sections=sections,
        title=document_title(record),
        metadata=record.as_dict(),
        warnings=warnings,
    )
