#!/usr/bin/env python3
"""Fail on broken links in the built book and in Markdown files that link into it.

mdbook renders a link to a missing chapter or heading without a word, so this checks the
output: every relative href/src in BOOK_DIR's HTML files must name an existing file inside
BOOK_DIR, and every #fragment an id in the target page. Each Markdown FILE (e.g. README.md)
is checked the same way: relative links must name existing files, and a fragment must be a
heading of the target (a chapter under the book's src/ is looked up in its built page).

usage: doclinks.py BOOK_DIR BOOK_SRC_DIR [FILE.md ...]
"""

import html.parser
import os
import re
import sys
from urllib.parse import unquote, urlsplit


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append(a[key])


SKIPPED = {"404.html", "index.html", "print.html"}


def external(url):
    return bool(urlsplit(url).scheme) or url.startswith("//")


_pages = {}


def page(path):
    if path not in _pages:
        p = Page()
        with open(path, encoding="utf-8") as f:
            p.feed(f.read())
        _pages[path] = p
    return _pages[path]


def slug(heading):
    """GitHub's (and mdbook's) id for a heading text."""
    text = re.sub(r"`|\*\*|__", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def md_headings(path):
    ids, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                ids.add(slug(line.lstrip("#")))
    return ids


def md_links(path):
    """(line number, target) of every inline Markdown link outside code."""
    out, fence = [], False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            line = re.sub(r"`[^`]*`", "", line)
            for m in re.finditer(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
                out.append((n, m.group(1)))
    return out


def check_book(book):
    errors = []
    for root, _, files in os.walk(book):
        for name in sorted(files):
            # 404.html resolves against the site root (<base href="/">); index.html and
            # print.html repeat the chapters' links.
            if not name.endswith(".html") or (root == book and name in SKIPPED):
                continue
            src = os.path.join(root, name)
            for link in page(src).links:
                if not link or external(link):
                    continue
                parts = urlsplit(link)
                target = src if not parts.path else os.path.normpath(
                    os.path.join(root, unquote(parts.path)))
                rel = os.path.relpath(src, book)
                if os.path.commonpath([os.path.abspath(target), os.path.abspath(book)]) != os.path.abspath(book):
                    errors.append(f"{rel}: {link}: leaves the book")
                elif not os.path.isfile(target):
                    errors.append(f"{rel}: {link}: no such page")
                elif parts.fragment and target.endswith(".html") \
                        and unquote(parts.fragment) not in page(target).ids:
                    errors.append(f"{rel}: {link}: no heading #{parts.fragment} in {os.path.relpath(target, book)}")
    return errors


def check_markdown(md, book, book_src):
    errors = []
    base = os.path.dirname(os.path.abspath(md))
    for n, link in md_links(md):
        if external(link):
            continue
        parts = urlsplit(link)
        target = os.path.abspath(md) if not parts.path else os.path.normpath(
            os.path.join(base, unquote(parts.path)))
        where = f"{md}:{n}: {link}"
        if not os.path.exists(target):
            errors.append(f"{where}: no such file")
            continue
        if not parts.fragment:
            continue
        frag = unquote(parts.fragment)
        src_root = os.path.abspath(book_src)
        if target.startswith(src_root + os.sep) and target.endswith(".md"):
            built = os.path.join(book, os.path.relpath(target, src_root))[:-3] + ".html"
            ok = os.path.isfile(built) and frag in page(built).ids
        elif target.endswith(".md"):
            ok = frag in md_headings(target)
        else:
            ok = True
        if not ok:
            errors.append(f"{where}: no heading #{frag}")
    return errors


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    book, book_src, mds = argv[1], argv[2], argv[3:]
    errors = check_book(book)
    for md in mds:
        errors += check_markdown(md, book, book_src)
    for e in errors:
        print(f"broken link: {e}", file=sys.stderr)
    if errors:
        print(f"doclinks: {len(errors)} broken link(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
