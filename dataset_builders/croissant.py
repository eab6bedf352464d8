"""``croissant.json``: the build described in Croissant 1.0 with its Responsible-AI fields.

The Hub writes a bare Croissant file for Parquet repos (no RAI fields, nothing
for a local build); dataset tracks ask for the full one. It is rendered from
the manifest alone, so ``validate`` can re-render it and compare: one record
set per config whose fields are typed from ``features.py`` (images; a
ClassLabel as its index, as ``load_dataset`` gives it, referencing an
enumeration record set of its class names), each config's shards as a
file set with each shard's sha256 (and the config's licence), the CogBench data
use agreement, both papers' citations and what the papers say about data
collection, annotation, limitations and biases (``rai:`` properties).
"""

from __future__ import annotations

from typing import Any

from cogbench.schemas.sources import SOURCES

CROISSANT_FILE = "croissant.json"
# The JSON-LD context of Croissant 1.0 (as mlcroissant writes it).
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
PARQUET = "application/x-parquet"
# Columns the record sets leave out, and why: mlcroissant 1.x cannot read a struct of lists of
# structs out of Parquet (its jsonPath takes one match and casts it), so a record set naming them
# would not load. load_dataset reads them; the dataset card documents them.
NOT_DESCRIBED = {"description": {"cors": "per category, a list of {text, premises, conclusion}; see the dataset card"}}
LICENSES = {
    "apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0",
    "cogbench-data-use-agreement": "CogBench data use agreement: non-commercial research and education only "
    "(terms 1-6 of LICENSE_DATASET of the authors' release; see the dataset card)",
}
CITATIONS = {
    "cogbench": "@inproceedings{song2025cogbench, title = {A Cognitive Evaluation Benchmark of Image Reasoning and "
    "Description for Large Vision-Language Models}, author = {Song, Xiujie and Wu, Mengyue and Zhu, Kenny Q. and Zhang, "
    "Chunhao and Chen, Yanyi}, booktitle = {Proceedings of NAACL 2025}, year = {2025}}",
    "codis": "@inproceedings{luo2024codis, title = {{CODIS}: Benchmarking Context-Dependent Visual Comprehension for "
    "Multimodal Large Language Models}, author = {Luo, Fuwen and Chen, Chi and others}, booktitle = {Proceedings of "
    "ACL 2024}, year = {2024}}",
}
# What the papers say (CogBench Sections 2.1-2.3, Limitations, Ethical Considerations; CODIS Section 3.4,
# Section 5.2, Limitations), per source; joined for the sources a build holds.
RAI = {
    "rai:dataCollection": {
        "cogbench": "CogBench (Section 2.1): Cookie Theft-like story pictures manually collected from Pinterest "
        "(in accordance with its terms of service), plus the Cookie Theft picture itself.",
        "codis": "CODIS (Section 3.4): images containing ambiguities that only an external context resolves, manually "
        "collected mostly from ShareGPT4V and the Internet, some created manually; 377 collected, 216 retained.",
    },
    "rai:dataAnnotationProtocol": {
        "cogbench": "CogBench (Section 2.2): three annotators per image (mostly students aged 18-28, paid) list "
        "entities, chains of reasoning in eight categories and a description; merged by majority, images with "
        "strongly differing readings discarded. VQA questions and options were generated with GPT-4 from the "
        "annotated chains of reasoning and checked manually (Section 2.3).",
        "codis": "CODIS (Section 3.4): five annotators wrote a question, two contexts and two answers per image; each "
        "submission was cross-checked by the other four and kept only if correct, distinct and within the criteria.",
    },
    "rai:dataLimitations": {
        "cogbench": "CogBench (Limitations): images meeting the collection standard are scarce, so the number of "
        "images is limited (comparable to MM-Vet). The public release holds only sample images; the full set is "
        "given out under the data use agreement.",
        "codis": "CODIS (Limitations): contexts are brief; only five context types and no other modalities are covered.",
    },
    "rai:dataBiases": {
        "cogbench": "CogBench: images come from one platform (Pinterest) and were selected and annotated by a small group "
        "of annotators, whose reading of each story defines the reference answers.",
        "codis": "CODIS (Section 5.2): the paper measures biases of model outputs (up/down, morning/afternoon, "
        "appropriate/not appropriate) against the balanced ground truth; images largely come from ShareGPT4V.",
    },
    "rai:personalSensitiveInformation": {
        "cogbench": "CogBench (Ethical Considerations): images are used under fair use for research only and shared "
        "with researchers who accept the data use agreement.",
        "codis": "CODIS: no personal information is annotated.",
    },
}


def render_croissant(manifest: dict[str, Any]) -> dict[str, Any]:
    """The Croissant JSON-LD of the build that ``manifest`` describes (deterministic)."""
    configs = sorted(manifest["configs"])
    sources = [name for name, source in SOURCES.items() if set(source.configs) & set(configs)]
    repo = manifest.get("repo_id")
    distribution, record_sets = [], []
    for config in configs:
        entry = manifest["configs"][config]
        distribution += [
            {
                "@type": "cr:FileObject",
                "@id": shard,
                "name": shard,
                "contentUrl": shard,
                "encodingFormat": PARQUET,
                "sha256": entry["shards"][shard]["sha256"],
            }
            for shard in sorted(entry["shards"])
        ]
        distribution.append(
            {
                "@type": "cr:FileSet",
                "@id": f"{config}-shards",
                "name": f"{config}-shards",
                "description": f"the Parquet shards of the {config} config (test split)",
                "encodingFormat": PARQUET,
                "includes": f"data/{config}/*.parquet",
                "license": _config_license(config),
            }
        )
        record_sets += _record_sets(config, entry["rows"])
    prints = manifest.get("fingerprints")
    if isinstance(prints, dict):
        distribution.append(
            {
                "@type": "cr:FileObject",
                "@id": prints["file"],
                "name": prints["file"],
                "description": "per image: sha256 and perceptual hashes (" + ", ".join(prints["families"]) + ")",
                "contentUrl": prints["file"],
                "encodingFormat": PARQUET,
                "sha256": prints["sha256"],
            }
        )
        record_sets.append(_fingerprint_record_set(prints))
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": "cogbench",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "description": "CogBench (cognitive evaluation of vision-language models through story images) and CODIS "
        "(context-dependent image understanding), built by cogbench: configs " + ", ".join(configs) + ".",
        "version": manifest["dataset_version"],
        **({"url": f"https://huggingface.co/datasets/{repo}"} if repo else {}),
        "license": sorted({_config_license(config) for config in configs}),
        "citeAs": "\n".join(CITATIONS[name] for name in sources),
        **{key: " ".join(texts[name] for name in sources) for key, texts in RAI.items()},
        "distribution": distribution,
        "recordSet": record_sets,
    }


def _config_license(config: str) -> str:
    (source,) = [source for source in SOURCES.values() if config in source.configs]
    return LICENSES[source.license_name or source.license]


def _record_sets(config: str, rows: int) -> list[dict[str, Any]]:
    """The config's record set (``rows`` records) and one enumeration record set per ClassLabel."""
    import datasets  # imported when a build's metadata is rendered, not by the commands that only read a build

    from cogbench.schemas.features import FEATURES

    fields, enumerations = [], []
    for name, feature in FEATURES[config].items():
        if name in NOT_DESCRIBED.get(config, {}):
            continue
        source = {"fileSet": {"@id": f"{config}-shards"}, "extract": {"column": name}}
        field = {"@type": "cr:Field", "@id": f"{config}/{name}", "name": name, "source": source}
        if isinstance(feature, datasets.ClassLabel):
            classes = f"{config}_{name}"
            enumerations.append(
                {
                    "@type": "cr:RecordSet",
                    "@id": classes,
                    "name": classes,
                    "dataType": "sc:Enumeration",
                    "description": f"the classes of {config}.{name}, by index",
                    "key": {"@id": f"{classes}/index"},
                    "field": [
                        _plain(f"{classes}/index", "index", "sc:Integer"),
                        _plain(f"{classes}/name", "name", "sc:Text"),
                    ],
                    "data": [
                        {f"{classes}/index": index, f"{classes}/name": label}
                        for index, label in enumerate(feature.names)
                    ],
                }
            )
            fields.append(
                {
                    **field,
                    "dataType": "sc:Integer",
                    "references": {"field": {"@id": f"{classes}/index"}},
                    "description": f"class index, as load_dataset gives it; its name: record set {classes}",
                }
            )
        else:
            if isinstance(feature, datasets.Image):  # the Parquet column is a struct {bytes, path}
                source["transform"] = {"jsonPath": "bytes"}
            fields.append({**field, **_data_type(feature)})
    left_out = "".join(f"; not described here: {name} ({why})" for name, why in NOT_DESCRIBED.get(config, {}).items())
    record_set = {
        "@type": "cr:RecordSet",
        "@id": config,
        "name": config,
        "description": f"the {config} config, test split: {rows} rows{left_out}",
        "field": fields,
    }
    return [*enumerations, record_set]


def _fingerprint_record_set(prints: dict[str, Any]) -> dict[str, Any]:
    """The fingerprints' scalar columns (the lists, ``configs`` and ``pdq_dihedral``, are left out as for ``cors``)."""
    names = ["benchmark", "image_id", "image_file", "width", "height", "sha256"]
    names += [n for n in ("phash", "dhash", "whash") if n in prints["families"]]
    names += ["pdq", "pdq_quality"] if "pdq" in prints["families"] else []
    fields = [
        {
            **_plain(f"fingerprints/{name}", name, "sc:Integer" if name in INTEGER_PRINTS else "sc:Text"),
            "source": {"fileObject": {"@id": prints["file"]}, "extract": {"column": name}},
        }
        for name in names
    ]
    return {
        "@type": "cr:RecordSet",
        "@id": "fingerprints",
        "name": "fingerprints",
        "description": f"one row per image ({prints['rows']} images): hashes as hex, most significant bit first; "
        "not described here: configs (list of config names), pdq_dihedral (the 8 dihedral PDQ hashes)",
        "field": fields,
    }


INTEGER_PRINTS = {"width", "height", "pdq_quality"}


def _plain(field_id: str, name: str, data_type: str) -> dict[str, Any]:
    return {"@type": "cr:Field", "@id": field_id, "name": name, "dataType": data_type}


def _data_type(feature: Any) -> dict[str, Any]:
    import datasets

    if isinstance(feature, datasets.Image):
        return {"dataType": "sc:ImageObject"}
    if isinstance(feature, datasets.List):
        return {**_data_type(feature.feature), "repeated": True}
    return {"dataType": "sc:Integer" if feature.dtype.startswith("int") else "sc:Text"}
