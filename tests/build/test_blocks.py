"""cowbird.build.blocks: a page's blocks in order, each with its boilerplate score and decision.

The pages are written here: an English and a German news article with navigation, a cookie banner,
sharing links, related links, comments and a footer; a forum thread; a page of boilerplate only.
"""

from __future__ import annotations

import copy
import random

import pytest
import trafilatura
from justext.core import revise_paragraph_classification

from cowbird.build.blocks import METHODS, _Paragraph, _side, extract_blocks, paragraphs, revise, stoplist
from cowbird.build.records import Block

NAV = """
<header class="site-header"><a class="logo" href="/">The Daily Courier</a>
<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li>
<li><a href="/culture">Culture</a></li><li><a href="/opinion">Opinion</a></li></ul></nav></header>
<div id="cookie-banner"><p>We use cookies to improve your experience on our website and to show you relevant
advertising. By continuing to browse the site you are agreeing to our use of cookies.</p>
<button>Accept all</button><a href="/privacy">Read our privacy policy</a></div>
"""

EN_MAIN = [
    "The town council decided on Tuesday evening to postpone the renovation of the primary school by a "
    "year, after the latest estimate put the cost of the work at almost twice what had been planned.",
    "The mayor said that rising construction costs would put more strain on the budget than the council "
    "could bear this year, and that he was not willing to cut the money for the library and the swimming "
    "pool to pay for it.",
    "Parents who attended the meeting were disappointed by the decision. Many of them said that they had "
    "been waiting for the new classrooms for more than five years and that their children were still "
    "being taught in rooms that are too cold in the winter.",
    "The council is expected to look at the plans again in the spring, when the results of a new tender "
    "for the work are known. Until then, two classes will be taught in a portable building in the "
    "playground.",
]

EN_ARTICLE = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Council delays school renovation</title>
<style>body {{ font-family: serif; }}</style><script>window.dataLayer = [];</script></head>
<body>{NAV}
<main><article>
<h1>Council delays school renovation by a year</h1>
<p class="byline">By Jane Miller, 12 March 2024</p>
<p>{EN_MAIN[0]}</p>
<p>{EN_MAIN[1]}</p>
<!-- ad slot -->
<div class="advert">Advertisement</div>
<p>{EN_MAIN[2]}</p>
<p>{EN_MAIN[3]}</p>
<div class="share-buttons"><a href="#">Share on Facebook</a> <a href="#">Share on Twitter</a>
<a href="#">Email this article</a></div>
</article></main>
<aside class="related"><h3>Related stories</h3><ul>
<li><a href="/a">New library opens in the old town hall</a></li>
<li><a href="/b">Swimming pool to stay open over the summer</a></li>
<li><a href="/c">Teachers warn of staff shortage in the county</a></li></ul></aside>
<section id="comments"><h3>3 comments</h3>
<div class="comment"><p>This is a disgrace, the school has been waiting for years and the council
keeps finding money for other things.</p></div>
<div class="comment"><p>Well done to the council for keeping an eye on the budget for once.</p></div>
</section>
<footer><p>&copy; 2024 The Daily Courier. All rights reserved.</p>
<p><a href="/contact">Contact</a> | <a href="/imprint">Imprint</a> | <a href="/privacy">Privacy</a></p></footer>
</body></html>"""

DE_MAIN = [
    "Der Gemeinderat hat am Dienstagabend beschlossen, die Sanierung der Grundschule um ein Jahr zu "
    "verschieben, nachdem die jüngste Schätzung die Kosten fast doppelt so hoch angesetzt hatte wie geplant.",
    "Der Bürgermeister sagte, die gestiegenen Baukosten würden den Haushalt stärker belasten, als die "
    "Gemeinde in diesem Jahr tragen könne, und er sei nicht bereit, dafür bei der Bücherei und dem "
    "Hallenbad zu sparen.",
    "Die Eltern, die zu der Sitzung gekommen waren, zeigten sich enttäuscht. Viele von ihnen sagten, dass "
    "sie seit mehr als fünf Jahren auf die neuen Klassenzimmer warten und dass ihre Kinder noch immer in "
    "Räumen unterrichtet werden, die im Winter zu kalt sind.",
    "Der Rat will sich im Frühjahr noch einmal mit den Plänen befassen, wenn die Ergebnisse einer neuen "
    "Ausschreibung vorliegen. Bis dahin werden zwei Klassen in einem Container auf dem Schulhof "
    "unterrichtet.",
]

DE_ARTICLE = f"""<html lang="de"><head><title>Sanierung der Grundschule verschoben</title></head><body>
<div id="navigation"><a href="/">Startseite</a> <a href="/lokales">Lokales</a> <a href="/sport">Sport</a>
<a href="/kultur">Kultur</a> <a href="/wetter">Wetter</a></div>
<div class="cmp-consent">Diese Website verwendet Cookies. Wenn Sie die Website weiter nutzen, stimmen Sie der
Verwendung von Cookies zu. <a href="/datenschutz">Mehr erfahren</a></div>
<div class="breadcrumb"><a href="/">Startseite</a> &gt; <a href="/lokales">Lokales</a> &gt; Schule</div>
<div class="content">
<h1>Sanierung der Grundschule um ein Jahr verschoben</h1>
<p>{DE_MAIN[0]}</p>
<p>{DE_MAIN[1]}</p>
<p>{DE_MAIN[2]}</p>
<p>{DE_MAIN[3]}</p>
</div>
<div class="teaser-list"><h3>Mehr aus Lokales</h3>
<p><a href="/x">Neue Bücherei im alten Rathaus eröffnet</a></p>
<p><a href="/y">Hallenbad bleibt im Sommer geöffnet</a></p></div>
<div id="kommentare" class="comments"><p>Eine Schande, die Schule wartet seit Jahren und für alles andere ist
Geld da.</p></div>
<div id="footer">Impressum | Datenschutz | Kontakt | &copy; 2024 Kreisbote</div>
</body></html>"""

FORUM_POSTS = [
    "Hi all, my bike's rear brake squeals terribly whenever it gets wet. I have already cleaned the rim "
    "with alcohol and the pads are only two months old. Does anyone know what else I could try?",
    "I had the same problem last winter. In my case the pads were toed the wrong way, so the back of the "
    "pad touched the rim first. Loosen the bolt, put a thin piece of cardboard behind the pad and tighten "
    "it again.",
    "Thanks, that was it! I did what you said and the squeal is gone, even after a ride in the rain this "
    "morning. I would never have thought of that myself.",
]

FORUM = f"""<html><head><title>Rear brake squeals when wet - Cycling Forum</title></head><body>
<div class="navbar"><a href="/">Forum</a> <a href="/search">Search</a> <a href="/login">Log in</a>
<a href="/register">Register</a></div>
<h1>Rear brake squeals when wet</h1>
<div class="post" id="post-1"><div class="author">pedalpusher</div><div class="date">Posted 3 May 2023</div>
<div class="message">{FORUM_POSTS[0]}</div></div>
<div class="post" id="post-2"><div class="author">old_spokes</div><div class="date">Posted 3 May 2023</div>
<div class="message">{FORUM_POSTS[1]}</div></div>
<div class="post" id="post-3"><div class="author">pedalpusher</div><div class="date">Posted 4 May 2023</div>
<div class="message">{FORUM_POSTS[2]}</div></div>
<div class="pagination"><a href="?page=1">1</a> <a href="?page=2">2</a> <a href="?page=3">Next</a></div>
<div class="footer">Powered by forum software &copy; 2023 | <a href="/rules">Forum rules</a></div>
</body></html>"""

ONLY_BOILERPLATE = """<html><head><title>Index</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/products">Products</a>
<a href="/contact">Contact</a></nav>
<ul class="menu"><li><a href="/a">Shoes</a></li><li><a href="/b">Bags</a></li><li><a href="/c">Belts</a></li></ul>
<div>Login | Register | Cart (0)</div>
<footer>&copy; 2024 Shop Ltd. All rights reserved. <a href="/terms">Terms</a> <a href="/privacy">Privacy</a></footer>
</body></html>"""


def main_texts(blocks: list[Block]) -> list[str]:
    return [block.text for block in blocks if block.main]


def all_texts(blocks: list[Block]) -> list[str]:
    return [block.text for block in blocks]


def kept_of(
    article: str, url: str, language: str, method: str, main: list[str], furniture: tuple[str, ...]
) -> list[str]:
    """The main blocks' texts of ``article``: every paragraph of ``main`` among them, none of ``furniture``
    in them."""
    kept = main_texts(extract_blocks(article, url, language=language, method=method))
    for paragraph in main:
        assert paragraph in kept
    joined = " ".join(kept)
    for boilerplate in furniture:
        assert boilerplate not in joined, boilerplate
    return kept


@pytest.mark.parametrize("method", METHODS)
def test_english_article_keeps_the_paragraphs_and_drops_the_furniture(method: str) -> None:
    kept = kept_of(EN_ARTICLE, "https://courier.example/news/school", "en", method, EN_MAIN,
                   ("Home", "We use cookies", "Share on Facebook", "New library opens", "This is a disgrace",
                    "All rights reserved", "Advertisement", "Privacy"))
    assert "Council delays school renovation by a year" in kept  # the headline, by the text it stands over


@pytest.mark.parametrize("method", METHODS)
def test_german_article_keeps_the_paragraphs_and_drops_the_furniture(method: str) -> None:
    kept_of(DE_ARTICLE, "https://kreisbote.example/lokales/schule", "de", method, DE_MAIN,
            ("Startseite", "verwendet Cookies", "Neue Bücherei", "Eine Schande", "Impressum"))


def test_without_a_language_english_and_german_stop_words_count() -> None:
    assert set(main_texts(extract_blocks(EN_ARTICLE))) >= set(EN_MAIN)
    assert set(main_texts(extract_blocks(DE_ARTICLE))) >= set(DE_MAIN)
    assert stoplist(("en", "de")) == stoplist(("en",)) | stoplist(("de",))
    assert "the" in stoplist(("en",)) and "und" in stoplist(("de",))


@pytest.mark.parametrize("method", METHODS)
def test_forum_posts_are_main_text_and_the_forum_furniture_is_not(method: str) -> None:
    blocks = extract_blocks(FORUM, language="en", method=method)
    kept = main_texts(blocks)
    assert all(post in kept for post in FORUM_POSTS)
    joined = " ".join(kept)
    for boilerplate in ("Log in", "Register", "Next", "Powered by"):
        assert boilerplate not in joined, boilerplate


@pytest.mark.parametrize("method", METHODS)
def test_a_page_of_boilerplate_only_has_no_main_text_but_every_block(method: str) -> None:
    blocks = extract_blocks(ONLY_BOILERPLATE, language="en", method=method)
    assert main_texts(blocks) == []
    assert all_texts(blocks) == [
        "Home About us Products Contact", "Shoes", "Bags", "Belts", "Login | Register | Cart (0)",
        "© 2024 Shop Ltd. All rights reserved. Terms Privacy",
    ]


def test_every_block_is_returned_in_order_with_a_score_that_matches_the_decision() -> None:
    blocks = extract_blocks(EN_ARTICLE, language="en")
    texts = all_texts(blocks)
    assert texts[:3] == ["The Daily Courier", "Home", "News"]
    assert texts.index(EN_MAIN[0]) < texts.index(EN_MAIN[1]) < texts.index(EN_MAIN[2]) < texts.index(EN_MAIN[3])
    assert "This is a disgrace, the school has been waiting for years and the council keeps finding money for " \
        "other things." in texts  # boilerplate is kept, marked
    for block in blocks:
        assert 0.0 <= block.score <= 1.0
        assert block.main == (block.score >= 0.5)
    assert {block.kind for block in blocks} >= {"h", "p", "li", "div"}


def test_scripts_styles_comments_noscript_templates_and_hidden_elements_are_never_text() -> None:
    html = """<html><head><style>p { color: red }</style><script>var secret = "script text";</script></head>
    <body><p>Visible one<!-- a comment in the text --> continues.</p><noscript>Enable JavaScript</noscript>
    <template><p>Template text</p></template><script type="application/ld+json">{"a": 1}</script>
    <div hidden>Hidden text</div><div style="display: none">Not shown</div><p aria-hidden="true">Aria hidden</p>
    <select><option>Option text</option></select><textarea>Typed text</textarea>
    <p>Visible two</p></body></html>"""
    assert all_texts(extract_blocks(html)) == ["Visible one continues.", "Visible two"]


def test_kinds_breaks_entities_and_inline_spaces() -> None:
    html = """<body><h2>A heading</h2><p><b>bold</b> <i>italic</i>&nbsp;and&amp;more &lt;tag&gt; caf&eacute;</p>
    <ul><li>first item</li><li>second <a href="/">item</a></li></ul><dl><dt>term</dt><dd>its meaning</dd></dl>
    <table><tr><th>Name</th><td>Value</td></tr></table><blockquote><p>Quoted words</p></blockquote>
    <pre>line one
    line   two</pre>
    <div>Line one<br>line two<br>
    <br>A new paragraph after a blank line</div>Text in the body itself</body>"""
    blocks = extract_blocks(html)
    assert [(block.kind, block.text) for block in blocks] == [
        ("h", "A heading"), ("p", "bold italic and&more <tag> café"), ("li", "first item"),
        ("li", "second item"), ("li", "term"), ("li", "its meaning"), ("td", "Name"), ("td", "Value"),
        ("quote", "Quoted words"), ("pre", "line one line two"), ("div", "Line one line two"),
        ("div", "A new paragraph after a blank line"), ("div", "Text in the body itself"),
    ]


def test_text_is_nfc_without_soft_hyphens_or_zero_width_characters() -> None:
    html = "<p>Cafe\u0301 Stra\u00adße zero\u200bwidth</p>"
    assert all_texts(extract_blocks(html)) == ["Café Straße zerowidth"]


@pytest.mark.parametrize("html", [
    "", "   ", "<!-- only a comment -->", "<html><head><title>x</title></head></html>", "<script>x()</script>",
])
def test_pages_without_text_give_no_blocks(html: str) -> None:
    assert extract_blocks(html) == []


def test_broken_html_is_read_as_a_browser_reads_it() -> None:
    html = "<p>First <b>unclosed bold <p>Second paragraph</i></div></span> text <td>stray cell"
    assert all_texts(extract_blocks(html)) == ["First unclosed bold", "Second paragraph text", "stray cell"]
    assert all_texts(extract_blocks("plain text without any markup")) == ["plain text without any markup"]
    xml = "<?xml version='1.0' encoding='iso-8859-1'?><html><body><p>Declared XML</p></body></html>"
    assert all_texts(extract_blocks(xml)) == ["Declared XML"]


def test_deep_nesting_does_not_overflow() -> None:
    html = "<div>" * 1000 + "<p>Deep inside the page</p>" + "</div>" * 1000
    assert "Deep inside the page" in all_texts(extract_blocks(html))


def test_link_characters_are_counted_for_link_lists() -> None:
    found = paragraphs('<p>Read <a href="/a">this story</a> now</p><p><a href="/">All links</a></p>')
    assert [(p.text, p.chars_count_in_links) for p in found] == [("Read this story now", 10), ("All links", 9)]


def test_scores_stay_on_the_side_of_the_decision() -> None:
    assert _side(0.9999, main=False) == 0.499
    assert _side(0.0, main=True) == 0.5
    assert _side(1.0, main=True) == 1.0
    assert _side(0.3, main=False) == 0.15


def test_when_trafilatura_fails_on_a_page_jusText_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("extractor bug")

    monkeypatch.setattr(trafilatura, "extract", broken)
    fallback = extract_blocks(EN_ARTICLE, language="en")
    assert fallback == extract_blocks(EN_ARTICLE, language="en", method="justext")
    assert set(main_texts(fallback)) >= set(EN_MAIN)


def test_an_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="method 'readability': one of trafilatura, trafilatura-fast, justext"):
        extract_blocks(EN_ARTICLE, method="readability")


def test_a_language_without_stop_words_counts_english_and_german() -> None:
    assert stoplist(("xx",)) == frozenset()
    assert set(main_texts(extract_blocks(DE_ARTICLE, language="xx", method="justext"))) >= set(DE_MAIN)
    assert set(main_texts(extract_blocks(DE_ARTICLE, language=["de", "en"], method="justext"))) >= set(DE_MAIN)


def test_the_linear_revision_decides_as_jusText_does() -> None:
    chance = random.Random(66)
    for _ in range(300):
        found = []
        for k in range(chance.randint(1, 40)):
            paragraph = _Paragraph("x" * chance.randint(1, 300), chance.choice(["p", "li", "h"]), 0, frozenset())
            paragraph.cf_class = chance.choice(["short", "neargood", "good", "bad"])
            paragraph.heading = paragraph.is_heading and k % 2 == 0 and paragraph.cf_class != "short"
            found.append(paragraph)
        theirs, ours = copy.deepcopy(found), copy.deepcopy(found)
        revise_paragraph_classification(theirs)
        revise(ours)
        assert [p.class_type for p in ours] == [p.class_type for p in theirs]


@pytest.mark.slow
def test_a_five_megabyte_page_is_read() -> None:
    paragraph = f"<p>{EN_MAIN[2]}</p>\n"
    copies = 5_000_000 // len(paragraph)
    html = "<html><body>" + NAV + paragraph * copies + "</body></html>"
    blocks = extract_blocks(html, language="en")
    assert sum(block.text == EN_MAIN[2] for block in blocks) == copies
    assert sum(block.main for block in blocks) == sum(block.text == EN_MAIN[2] for block in blocks)
