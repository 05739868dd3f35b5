"""Language identification for `cowbird build`: py3langid against lingua (high and low accuracy mode).

The texts are web-like paragraphs written for this benchmark (a product review, a forum question, a
news item, a how-to, a blog entry) in German, English, French, Dutch, Spanish and Italian: no library
here was trained or tuned on them. Each is identified whole (paragraph, ~50-90 words), as its first
15 words and as its first 6 words (a heading or a short list item is that long), and six of them
joined make a document of ~3,000 characters for the speed figure (ms per document; what the clean
phase pays per page). Memory: the process's peak RSS after each library is loaded and has run.

``--profiles`` prints how cowbird.build.language's badness profiles were made: the ten most frequent
words of letters per language in wordfreq (``pip install wordfreq``; not a dependency of the build)
with their frequencies, and for English each word's weighted mean and standard deviation of its
relative frequency over the English Web Treebank's documents of >= 150 words (texprof's method; read
from ../shared/reference/ewt.vrt when it is there), whose ratio gives the profiles' sigma / mu.

Run: ``.venv/bin/python -m bench.language_id [--profiles]``; the figures go into bench/RESULTS.md and the choice
into docs/building-corpora.md ("Language and connected-text quality").
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Callable

TEXTS: dict[str, list[str]] = {
    "de": [
        "Ich habe den Staubsauger jetzt seit drei Monaten und bin eigentlich ganz zufrieden. Die Saugleistung "
        "ist auf Teppich deutlich besser als bei meinem alten Gerät, nur der Akku hält leider nicht so lange, "
        "wie es der Hersteller verspricht. Nach etwa zwanzig Minuten ist Schluss, dann muss er wieder an die "
        "Ladestation.",
        "Hallo zusammen, weiß jemand, wie man bei Windows die automatischen Updates für eine Weile abschalten "
        "kann? Mein Rechner startet ständig neu, während ich arbeite, und das nervt mich inzwischen gewaltig. "
        "In den Einstellungen habe ich schon alles durchsucht, aber nichts Passendes gefunden.",
        "Der Gemeinderat hat am Dienstagabend beschlossen, die Sanierung der Grundschule um ein Jahr zu "
        "verschieben. Als Grund nannte der Bürgermeister die gestiegenen Baukosten, die den Haushalt der "
        "Gemeinde stärker belasten würden als ursprünglich geplant. Die Eltern reagierten enttäuscht.",
        "Zuerst die Zwiebeln fein würfeln und in etwas Butter glasig dünsten. Dann den Reis dazugeben, kurz "
        "mitrösten und mit einem Schluck Weißwein ablöschen. Nach und nach heiße Brühe angießen und dabei "
        "immer wieder umrühren, bis der Reis cremig, aber noch bissfest ist.",
        "Letztes Wochenende waren wir endlich wieder in den Bergen wandern. Das Wetter war zwar nicht perfekt, "
        "aber die Aussicht vom Gipfel hat uns für den anstrengenden Aufstieg mehr als entschädigt. Auf dem "
        "Rückweg haben wir in einer kleinen Hütte eingekehrt und Kaiserschmarrn gegessen.",
    ],
    "en": [
        "I've had this vacuum for about three months now and I'm mostly happy with it. It picks up far more "
        "from the carpet than my old one did, but the battery doesn't last anywhere near as long as the box "
        "claims. After twenty minutes or so it has to go back on the charger.",
        "Hi all, does anyone know how to pause the automatic updates in Windows for a while? My computer keeps "
        "restarting while I'm in the middle of something and it's driving me mad. I've looked through all the "
        "settings but couldn't find anything that seems to do it.",
        "The town council decided on Tuesday evening to postpone the renovation of the primary school by a "
        "year. The mayor said rising construction costs would put more strain on the budget than had been "
        "planned, and parents who attended the meeting were disappointed by the decision.",
        "First chop the onions finely and soften them in a little butter. Then add the rice, toast it for a "
        "minute and pour in a splash of white wine. Add the hot stock a ladle at a time, stirring as you go, "
        "until the rice is creamy but still has a little bite.",
        "Last weekend we finally went hiking in the mountains again. The weather wasn't perfect, but the view "
        "from the summit more than made up for the hard climb. On the way back down we stopped at a little "
        "hut and had pancakes with apple sauce.",
    ],
    "fr": [
        "J'ai cet aspirateur depuis trois mois et dans l'ensemble j'en suis plutôt content. Il aspire beaucoup "
        "mieux sur la moquette que mon ancien appareil, mais la batterie ne tient pas aussi longtemps que le "
        "promet le fabricant. Au bout de vingt minutes, il faut le remettre sur sa base.",
        "Bonjour à tous, quelqu'un sait-il comment suspendre les mises à jour automatiques de Windows pendant "
        "quelque temps ? Mon ordinateur redémarre sans arrêt pendant que je travaille et ça commence à "
        "sérieusement m'énerver. J'ai fouillé dans tous les paramètres sans rien trouver.",
        "Le conseil municipal a décidé mardi soir de repousser d'un an la rénovation de l'école primaire. Le "
        "maire a invoqué la hausse des coûts de construction, qui pèserait davantage sur le budget de la "
        "commune que prévu. Les parents présents se sont dits déçus.",
        "Commencez par émincer finement les oignons et faites-les revenir dans un peu de beurre. Ajoutez le "
        "riz, laissez-le nacrer une minute puis déglacez avec un trait de vin blanc. Versez le bouillon chaud "
        "louche après louche en remuant jusqu'à ce que le riz soit crémeux.",
        "Le week-end dernier, nous sommes enfin retournés randonner en montagne. Le temps n'était pas parfait, "
        "mais la vue depuis le sommet nous a largement récompensés de la montée difficile. Au retour, nous "
        "nous sommes arrêtés dans un petit refuge pour manger une crêpe.",
    ],
    "nl": [
        "Ik heb deze stofzuiger nu drie maanden en ben er eigenlijk best tevreden over. Op tapijt zuigt hij "
        "veel beter dan mijn oude apparaat, alleen houdt de accu het lang niet zo lang vol als de fabrikant "
        "belooft. Na ongeveer twintig minuten moet hij weer aan de lader.",
        "Hallo allemaal, weet iemand hoe je de automatische updates van Windows een tijdje kunt uitzetten? "
        "Mijn computer start steeds opnieuw op terwijl ik aan het werk ben en daar word ik echt gek van. Ik "
        "heb alle instellingen al doorzocht maar niets kunnen vinden.",
        "De gemeenteraad heeft dinsdagavond besloten de renovatie van de basisschool een jaar uit te stellen. "
        "De burgemeester wees op de gestegen bouwkosten, die de begroting van de gemeente zwaarder zouden "
        "belasten dan gepland. De aanwezige ouders waren teleurgesteld.",
        "Snipper eerst de uien fijn en fruit ze glazig in een beetje boter. Voeg dan de rijst toe, bak die "
        "even mee en blus af met een scheutje witte wijn. Giet er beetje bij beetje hete bouillon bij en blijf "
        "roeren tot de rijst romig is maar nog wat beet heeft.",
        "Afgelopen weekend zijn we eindelijk weer gaan wandelen in de bergen. Het weer was niet perfect, maar "
        "het uitzicht vanaf de top maakte de zware klim meer dan goed. Op de terugweg zijn we gestopt bij een "
        "kleine hut en hebben we pannenkoeken gegeten.",
    ],
    "es": [
        "Tengo esta aspiradora desde hace tres meses y en general estoy bastante contento. Aspira mucho mejor "
        "en la alfombra que mi aparato anterior, pero la batería no dura ni de lejos lo que promete el "
        "fabricante. A los veinte minutos hay que volver a ponerla en la base.",
        "Hola a todos, ¿alguien sabe cómo desactivar durante un tiempo las actualizaciones automáticas de "
        "Windows? Mi ordenador se reinicia constantemente mientras estoy trabajando y ya me tiene harto. He "
        "revisado toda la configuración pero no he encontrado nada.",
        "El ayuntamiento decidió el martes por la noche aplazar un año la reforma del colegio de primaria. El "
        "alcalde alegó el aumento de los costes de construcción, que pesarían sobre el presupuesto municipal "
        "más de lo previsto. Los padres asistentes se mostraron decepcionados.",
        "Primero pica la cebolla muy fina y pochala en un poco de mantequilla. Después añade el arroz, "
        "tuéstalo un minuto y riega con un chorrito de vino blanco. Ve echando el caldo caliente poco a poco "
        "sin dejar de remover hasta que el arroz quede cremoso.",
        "El fin de semana pasado por fin volvimos a hacer senderismo en la montaña. El tiempo no fue perfecto, "
        "pero las vistas desde la cumbre compensaron con creces la dura subida. A la vuelta paramos en un "
        "pequeño refugio y comimos unas tortitas.",
    ],
    "it": [
        "Ho questo aspirapolvere da tre mesi e nel complesso sono abbastanza soddisfatto. Sul tappeto aspira "
        "molto meglio del mio vecchio apparecchio, però la batteria non dura neanche lontanamente quanto "
        "promette il produttore. Dopo venti minuti bisogna rimetterlo sulla base.",
        "Ciao a tutti, qualcuno sa come sospendere per un po' gli aggiornamenti automatici di Windows? Il mio "
        "computer si riavvia di continuo mentre lavoro e la cosa mi sta facendo impazzire. Ho controllato "
        "tutte le impostazioni ma non ho trovato niente.",
        "Il consiglio comunale ha deciso martedì sera di rinviare di un anno la ristrutturazione della scuola "
        "elementare. Il sindaco ha citato l'aumento dei costi di costruzione, che peserebbe sul bilancio del "
        "comune più del previsto. I genitori presenti si sono detti delusi.",
        "Per prima cosa tritate finemente la cipolla e fatela appassire in un po' di burro. Aggiungete il "
        "riso, tostatelo per un minuto e sfumate con un goccio di vino bianco. Versate il brodo caldo un "
        "mestolo alla volta, mescolando finché il riso non diventa cremoso.",
        "Lo scorso fine settimana siamo finalmente tornati a camminare in montagna. Il tempo non era perfetto, "
        "ma il panorama dalla vetta ci ha ripagato abbondantemente della salita faticosa. Al ritorno ci siamo "
        "fermati in un piccolo rifugio a mangiare una fetta di torta.",
    ],
}
"""Five paragraphs per language, written for this benchmark, the same five topics in each language."""


def _samples() -> list[tuple[str, str, str]]:
    """(level, language, text): every paragraph whole, as its first 15 words and as its first 6 words."""
    rows: list[tuple[str, str, str]] = []
    for language, paragraphs in TEXTS.items():
        for paragraph in paragraphs:
            words = paragraph.split()
            rows.append(("paragraph", language, paragraph))
            rows.append(("15 words", language, " ".join(words[:15])))
            rows.append(("6 words", language, " ".join(words[:6])))
    return rows


def _py3langid() -> Callable[[str], str]:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return lambda text: str(identifier.classify(text)[0])


def _lingua(low: bool) -> Callable[[str], str]:
    from lingua import LanguageDetectorBuilder

    builder = LanguageDetectorBuilder.from_all_languages()
    detector = (builder.with_low_accuracy_mode() if low else builder.with_preloaded_language_models()).build()

    def classify(text: str) -> str:
        language = detector.detect_language_of(text)
        return "und" if language is None else language.iso_code_639_1.name.lower()

    return classify


def _cowbird() -> Callable[[str], str]:
    from cowbird.build.language import identify

    return lambda text: identify(text)[0]


CANDIDATES: list[tuple[str, Callable[[], Callable[[str], str]]]] = [
    ("py3langid 0.4", _py3langid),
    ("lingua 2.1, low accuracy", lambda: _lingua(True)),
    ("lingua 2.1, high accuracy", lambda: _lingua(False)),
    ("cowbird.build.language.identify", _cowbird),
]
DOCUMENT = (" ".join(TEXTS["de"]) + " ") * 2
DOCUMENT = DOCUMENT[: DOCUMENT.rindex(" ", 0, 3000)]
"""~3,000 characters of German: the five paragraphs twice, cut at a space."""


def main() -> None:
    """Print accuracy per text length, ms per ~3,000-character document and peak RSS per candidate, each
    candidate in a process of its own (so that its RSS is its own)."""
    if sys.argv[1:] == ["--profiles"]:
        _profiles()
        return
    if len(sys.argv) > 1:
        _row(int(sys.argv[1]))
        return
    print(f"document for speed: {len(DOCUMENT)} characters; machine: 2 cores")
    print("| candidate | paragraphs | 15 words | 6 words | load s | ms per 3,000-char document | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for number in range(len(CANDIDATES)):
        subprocess.run([sys.executable, "-m", "bench.language_id", str(number)], check=True)


def _profiles() -> None:
    """Print the badness profiles' sources: wordfreq's top words, EWT's weighted means and spreads."""
    import re

    import numpy as np
    from wordfreq import top_n_list, word_frequency

    from bench.ewt import EWT, ewt_documents

    letters = re.compile(r"[^\W\d_]+")
    for language in ("de", "en", "es", "fr", "it", "nl"):
        top = [word for word in top_n_list(language, 40) if letters.fullmatch(word)][:10]
        print(language, ", ".join(f"{word} {word_frequency(word, language):.4g}" for word in top))
    if not EWT.exists():
        print(f"{EWT} is not there: no measured spreads")
        return
    documents = ewt_documents(150, str.casefold, letters.fullmatch)
    lengths = np.array([len(document) for document in documents], dtype=float)
    print(f"EWT: {len(documents)} documents of >= 150 words")
    for word in [word for word in top_n_list("en", 40) if letters.fullmatch(word)][:12]:
        shares = np.array([document.count(word) / len(document) for document in documents])
        mean = float(np.average(shares, weights=lengths))
        spread = float(np.sqrt(np.average((shares - mean) ** 2, weights=lengths)))
        print(f"{word}: mu {mean:.4f} sigma {spread:.4f} sigma/mu {spread / mean:.2f} (wordfreq "
              f"{word_frequency(word, 'en'):.4f})")


def _row(number: int) -> None:
    """One candidate's row of the table."""
    name, make = CANDIDATES[number]
    samples = _samples()
    document = DOCUMENT
    started = time.perf_counter()
    classify = make()
    classify("warm up")
    load = time.perf_counter() - started
    right: dict[str, list[int]] = {}
    for level, language, text in samples:
        hits = right.setdefault(level, [0, 0])
        hits[0] += classify(text) == language
        hits[1] += 1
    runs = 200
    started = time.perf_counter()
    for _ in range(runs):
        classify(document)
    per_document = (time.perf_counter() - started) / runs * 1000
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cells = " | ".join(f"{right[level][0]}/{right[level][1]}" for level in ("paragraph", "15 words", "6 words"))
    print(f"| {name} | {cells} | {load:.2f} | {per_document:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
