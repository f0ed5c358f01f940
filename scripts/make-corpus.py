#!/usr/bin/env python3
"""Builds configs/data/handbook-corpus.txt, the real text the accuracy checks run on (issue 37).

Source: Debian's `debian-handbook` package (The Debian Administrator's Handbook, by Raphaël
Hertzog and Roland Mas, GPL-2.0+ or CC-BY-SA-3.0), which ships the book as HTML in many
languages. The corpus takes its prose paragraphs in English, French, German and Spanish, all
covered by the uncased WordPiece vocabulary of all-MiniLM-L6-v2 (lower-cased, accents stripped).

A sample is one paragraph or a run of consecutive paragraphs of one chapter: each sample's length
in words is drawn from a seeded lognormal (median 45 words, sigma 0.9, at most 420 words), so the
lengths run from a sentence to passages past the model's 512 tokens (those are truncated by the
workload, and attnbench says how many). A translated paragraph identical to the English one at the
same place of the same chapter is untranslated and left out. The languages are interleaved and
each language's samples shuffled (seeded), so any first N lines mix languages and lengths, and a
config's "workload.samples": N takes a representative subset.

Usage:
  scripts/make-corpus.py [--html DIR | --deb FILE] [--out configs/data/handbook-corpus.txt]
Without --html or --deb it runs `apt-get download debian-handbook` in a temporary folder.
Writes the corpus and, beside it, handbook-corpus.md (source, licence, statistics) and
handbook-corpus.COPYRIGHT (the package's copyright file). Deterministic for a given package.
"""
import argparse
import html.parser
import os
import random
import re
import subprocess
import sys
import tempfile

LANGUAGES = [("en-US", "English"), ("fr-FR", "French"), ("de-DE", "German"), ("es-ES", "Spanish")]
PER_LANGUAGE = 600
MEDIAN_WORDS, SIGMA, MAX_WORDS, MIN_PARA_WORDS = 45, 0.9, 420, 8
SEED = 37


class ParaParser(html.parser.HTMLParser):
    """The text of each <div class="para"> outside <pre>, tags stripped."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paras, self.depth, self.pre, self.buf = [], 0, 0, []

    def handle_starttag(self, tag, attrs):
        if tag == "pre":
            self.pre += 1
        if tag == "div":
            if self.depth:
                self.depth += 1
            elif ("class", "para") in attrs:
                self.depth, self.buf = 1, []

    def handle_endtag(self, tag):
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag == "div" and self.depth:
            self.depth -= 1
            if self.depth == 0:
                self.paras.append(re.sub(r"\s+", " ", "".join(self.buf)).strip())

    def handle_data(self, data):
        if self.depth and not self.pre:
            self.buf.append(data)


def chapters(html_dir, lang):
    d = os.path.join(html_dir, lang)
    out = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".html"):
            continue
        p = ParaParser()
        with open(os.path.join(d, name), encoding="utf-8") as f:
            p.feed(f.read())
        out[name] = p.paras
    return out


def samples_of(paras_by_chapter, english, rng):
    out = []
    for name in sorted(paras_by_chapter):
        paras = [
            t for i, t in enumerate(paras_by_chapter[name])
            if len(t.split()) >= MIN_PARA_WORDS
            and (english is None or i >= len(english.get(name, [])) or t != english[name][i])
        ]
        i = 0
        while i < len(paras):
            target = min(MAX_WORDS, rng.lognormvariate(0.0, SIGMA) * MEDIAN_WORDS)
            words = paras[i].split()
            i += 1
            while len(words) < target and i < len(paras):
                words += paras[i].split()
                i += 1
            out.append(" ".join(words[:MAX_WORDS]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--html", help="the package's html/ folder (usr/share/doc/debian-handbook/html)")
    ap.add_argument("--deb", help="a downloaded debian-handbook .deb")
    ap.add_argument("--out", default="configs/data/handbook-corpus.txt")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="corpus-")
    html_dir, version = a.html, "unknown"
    if not html_dir:
        deb = a.deb
        if not deb:
            subprocess.run(["apt-get", "download", "debian-handbook"], cwd=tmp, check=True)
            deb = os.path.join(tmp, next(f for f in os.listdir(tmp) if f.endswith(".deb")))
        subprocess.run(["dpkg-deb", "-x", deb, os.path.join(tmp, "x")], check=True)
        version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True, text=True,
                                 check=True).stdout.strip()
        html_dir = os.path.join(tmp, "x/usr/share/doc/debian-handbook/html")
    copyright_file = os.path.join(html_dir, "..", "copyright")

    rng = random.Random(SEED)
    english = chapters(html_dir, "en-US")
    per_lang = {}
    for lang, _ in LANGUAGES:
        paras = english if lang == "en-US" else chapters(html_dir, lang)
        s = samples_of(paras, None if lang == "en-US" else english, rng)
        rng.shuffle(s)
        if len(s) < PER_LANGUAGE:
            sys.exit(f"make-corpus: {lang} gives {len(s)} samples, fewer than {PER_LANGUAGE}")
        per_lang[lang] = s[:PER_LANGUAGE]
    lines = [per_lang[lang][k] for k in range(PER_LANGUAGE) for lang, _ in LANGUAGES]

    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    stem = os.path.splitext(a.out)[0]
    if os.path.exists(copyright_file):
        with open(copyright_file, encoding="utf-8") as src, open(stem + ".COPYRIGHT", "w", encoding="utf-8") as dst:
            dst.write(src.read())
    words = sorted(len(t.split()) for t in lines)
    q = lambda p: words[min(len(words) - 1, int(p * len(words)))]
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write(f"""# handbook-corpus.txt

{len(lines)} samples of real prose, one a line, for the accuracy checks (issue 37), made by
`scripts/make-corpus.py` from Debian 12's `debian-handbook` package, version {version}: *The Debian
Administrator's Handbook* by Raphaël Hertzog and Roland Mas, copyright 2003-2015 Raphaël Hertzog,
Roland Mas and Freexian SARL, licensed GPL-2.0+ or CC-BY-SA-3.0 (the package's copyright file is
`handbook-corpus.COPYRIGHT` beside this one). This corpus is a derived work under the same
licences: paragraphs extracted from the HTML, tags removed, consecutive paragraphs joined.

| language | samples |
|---|---:|
""")
        for lang, name in LANGUAGES:
            f.write(f"| {name} ({lang}) | {PER_LANGUAGE} |\n")
        f.write(f"""
Words per sample: min {words[0]}, median {q(0.5)}, 90th percentile {q(0.9)}, max {words[-1]}
(WordPiece tokens run about 1.3-1.8 a word: the longest samples pass all-MiniLM-L6-v2's 512
tokens and are truncated by the workload, which says how many). A sample is one paragraph or a
run of consecutive paragraphs of one chapter, its length drawn from a seeded lognormal (median
{MEDIAN_WORDS} words, sigma {SIGMA}, at most {MAX_WORDS}); untranslated paragraphs (identical to
the English one at the same place) are left out; the languages are interleaved line by line
(English, French, German, Spanish, ...) and each language's samples shuffled with seed {SEED}, so
the first N lines are a representative subset.
""")
    print(f"make-corpus: {len(lines)} samples -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
