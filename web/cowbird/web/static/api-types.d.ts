// Generated from the front end's /openapi.json by `make api-types` (cowbird.frontend.api_types): do
// not edit. `make lint` fails when this file differs from a fresh generation.
// A model the server sends as an answer has every property (null where the field may be None); a
// request's model and Problem have optional (?) the properties with a default.

/** A partition has answered (or failed). */
export interface AnalysisPartition {
  event: "partition";
  partition: PartitionResult;
  /** Partitions answered (or failed) so far. */
  done: number;
  partitions: number;
  /** The partitions that failed so far. */
  failed: string[];
}

/** A streamed analysis has started. */
export interface AnalysisStarted {
  event: "started";
  /** The corpus's partitions. */
  partitions: number;
}

/**
 * The search runs as background work (a sorted page deep in the hits, or estimated beyond the
 * interactive budget): said before it waits for its turn.
 */
export interface BackgroundNotice {
  event: "background";
  estimated_seconds: number | null;
  reason: string;
  message: string;
}

/**
 * A boundary of a region inside a concordance line: before the character ``at`` (in code points)
 * of its ``part``.
 */
export interface Boundary {
  /** The s-attribute (text, s). */
  region: string;
  part: "left" | "match" | "right";
  /** The character of the part the boundary comes before (code points). */
  at: number;
}

export interface BoxTest {
  /** A p-attribute (word, lemma, pos ...). */
  attribute: string;
  operator: "is" | "is_not" | "starts" | "contains" | "ends" | "regex" | "not_regex";
  value: string;
  /** @default false */
  ignore_case: boolean;
}

/**
 * How far the build is: each phase's shards done, the duplicates removed, the tokens once encoded.
 */
export interface BuildProgress {
  phases: Record<string, string>;
  removed: Record<string, number>;
  tokens: number | null;
  partitions: Record<string, unknown>[];
}

/**
 * A query and its boxes: ``fits`` false (with the ``reason``) when the boxes cannot show the query.
 */
export interface BuilderResult {
  /** The canonical CQP of the query. */
  cqp: string;
  fits: boolean;
  reason: string | null;
  boxes: QueryBoxes | null;
}

/** One concordance line's category: the hit's global positions and 1-9 (0 takes it away). */
export interface CategoryLine {
  position: number;
  matchend: number;
  category: number;
}

export interface CategoryNames {
  /** The names of categories 1, 2 … (empty: unnamed). */
  labels: string[];
}

export interface CheckResult {
  /** The canonical form of the query: what the nodes run. */
  cqp: string;
}

export interface CollocateRow {
  value: string;
  /** Co-occurrences (O11): window positions with this value. */
  f: number;
  /** Frequency outside the hits (C1). */
  f2: number;
  /** Frequency in the texts searched (the filters' subcorpus, or the corpus). */
  marginal: number;
  /** Frequency inside the hits. */
  in_nodes: number;
  /**
   * Expected co-occurrences (E11 = f1 · f2 / N, CQPweb's expected collocate frequency): full
   * precision.
   */
  expected: number;
  /**
   * Texts it co-occurs with the hits in (CQPweb's "in no. of texts"): texts holding a window
   * position with it, each once over every partition (a text cut between partitions too), in the
   * filters' subcorpus; None: the corpus has no text.
   */
  texts: number | null;
  /** Each measure, at full precision (the page shows 3 significant digits). */
  scores: Record<string, number>;
  /**
   * The search page showing the hits with this collocate in their window (each match runs from the
   * hit to the collocate); None for a value no CQP string can hold (one with a control character).
   */
  concordance: string | null;
}

/**
 * Collocates in windows around the hits, scored on the counts of the texts searched: the whole
 * corpus, or under filters their subcorpus (windows, marginals and N all inside it).
 */
export interface CollocationResult {
  corpus: string;
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Hits in the partitions that answered. */
  total: number;
  /** False when a partition failed (its hits are missing from every count). */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  attribute: string;
  left: number;
  right: number;
  within: string | null;
  measures: string[];
  order: string;
  min_freq: number;
  /** Tokens in the windows (R1), each once, hits excluded. */
  f1: number;
  /** Tokens of the texts searched (the filters' subcorpus) in the partitions that answered. */
  tokens: number;
  /** Tokens of the texts searched outside the hits (N). */
  n: number;
  /** Distinct collocates before min_freq. */
  candidates: number;
  truncated: boolean;
  /** The first row of this page in the whole table (0-based). */
  offset: number;
  /**
   * Rows of the whole table (collocates with at least min_freq co-occurrences): page with offset
   * and limit.
   */
  rows_total: number;
  rows: CollocateRow[];
}

/** The setting a comparison that listed nothing should be asked with next. */
export interface CompareNext {
  /** The parameter to change. */
  parameter: "p" | "min";
  /** Its value (p=1: no significance test, every value ranked). */
  value: number;
  /** The rows the comparison would list with it (at most limit a side). */
  rows: number;
  /** Why nothing was listed and what the setting lists instead. */
  detail: string;
}

/**
 * Two searches compared on an attribute of the match: which values each prefers, exact over every
 * partition, ranked by keyness as keyword lists are.
 */
export interface CompareResult {
  first: ComparedSearch;
  second: ComparedSearch;
  by: string;
  on: string;
  fold: string;
  min: number;
  order: string;
  /** Values reaching min on one side. */
  compared: number;
  p: number;
  correction: string;
  /** The least |log-likelihood| listed (0: every value). */
  critical_log_likelihood: number;
  min_log_ratio: number;
  /** Values compared and not listed. */
  not_significant: number;
  /** Values listed as preferred by the first search (rows: at most limit). */
  preferred_first: number;
  preferred_second: number;
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  /** The first search's preferred values, most distinctive first, then the second's. */
  rows: CompareRow[];
  /**
   * When no row is listed: the nearest setting that lists some (a less strict p, then p=1: every
   * value ranked by log-likelihood; with nothing compared, a smaller min) and how many rows it
   * would list; None otherwise.
   */
  next_setting: CompareNext | null;
  elapsed_ms: number;
}

export interface CompareRow {
  value: string;
  /** The search this value is relatively more frequent in. */
  preferred: "first" | "second";
  /** Hits with this value in the first search. */
  frequency: number;
  /** … in the second. */
  other_frequency: number;
  /** frequency / counted of the first search. */
  share: number;
  other_share: number;
  /** Signed: negative where the value is rarer in the first search. */
  log_likelihood: number;
  /** log2 of the ratio of the shares (a zero counts as 0.5). */
  log_ratio: number;
  /** Its 95 % confidence interval: lower bound. */
  log_ratio_low: number;
  log_ratio_high: number;
  /** %DIFF: the difference of the shares in % of the second's. */
  diff: number;
  /**
   * The search page with these hits of the first search (None where no query can pick them out: a
   * value of several tokens).
   */
  hits: string | null;
  /** … of the second search. */
  other_hits: string | null;
}

/** One side of a comparison. */
export interface ComparedSearch {
  corpus: string;
  q: string;
  syntax: string;
  ignore_case: boolean;
  filters: string[];
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Its hits, in the partitions that answered. */
  total: number;
  /** Hits with a value counted (the size the shares and the measures use). */
  counted: number;
  /** Distinct values. */
  distinct: number;
  /** A partition had more distinct values than it lists: counts may be low. */
  truncated: boolean;
}

export interface CorpusList {
  data: CorpusSummary[];
  total: number;
}

/** A value's hits and size in one of several corpora searched. */
export interface CorpusShare {
  hits: number;
  tokens: number;
  per_million: number;
}

/** A corpus as the listing shows it. */
export interface CorpusSummary {
  /** Short name used in URLs and in the corpus= parameter. */
  name: string;
  title: string;
  description: string;
  /** ISO code of the language. */
  language: string;
  /** public, login, or group:NAME. */
  access: string;
  /** Tokens in the whole corpus. */
  size: number;
  /** Positional attributes: what show= and queries can name. */
  p_attributes: string[];
  /** Structural attributes (regions such as s and text). */
  s_attributes: string[];
  /** The s-attributes whose regions carry values: what meta= and filter= name. */
  meta: string[];
  /**
   * What an attribute holds (its tagset, say), where the configuration says so: {"pos": "Penn
   * Treebank tags"}.
   */
  attributes: Record<string, string>;
  /**
   * The relations of its word sketches (empty: the corpus has no sketch grammar).
   * @default []
   */
  sketches: string[];
  /**
   * Each relation's label as its grammar's *LABEL gives it, %w where the headword goes (object_of:
   * verbs with "%w" as object); a relation without a label is not listed.
   * @default {}
   */
  sketch_labels: Record<string, string>;
  partitions: PartitionSummary[];
}

/** One corpus's share of a search over several (corpus=a,b): its exact total and rate. */
export interface CorpusTotal {
  corpus: string;
  /** Its hits, in its partitions that answered. */
  total: number;
  /** Tokens of its texts searched (the filters' subcorpus), as for the whole. */
  tokens: number | null;
  /** Hits per million of those tokens. */
  per_million: number | null;
  complete: boolean;
  failed: string[];
  /**
   * Where its hits begin among all the hits in corpus order (0-based: ask offset=first, or the page
   * holding it, to see them); None when it has none, or when the hits are sorted (sort=): then
   * search it alone.
   */
  first: number | null;
}

/** The crawl's OUT/progress.json, in part (docs/crawling.md). */
export interface CrawlProgress {
  state: string | null;
  pages: number | null;
  bytes: number | null;
  good: number | null;
  good_share: number | null;
  queued: number | null;
  /** Hosts the crawl knows of (found in links), fetched or not. */
  hosts: number | null;
  elapsed: number | null;
  stop_reason: string | null;
}

/**
 * The crawl's OUT/report.json, in part: the good-document share over the crawl, per language, per
 * host.
 */
export interface CrawlReport {
  good_share_over_time: Part[];
  languages: Record<string, number>;
  good_per_host: Record<string, number> | null;
  /** The 20 hosts with most pages. */
  hosts: Record<string, unknown>[];
  outcomes: Record<string, number>;
}

export interface DeletedCorpus {
  name: string;
  /** @default true */
  deleted: boolean;
}

export interface DispersionBin {
  /** Global position of the stretch's first token. */
  start: number;
  /** Global position of its last token. */
  end: number;
  /** Hits that start in it. */
  hits: number;
}

export interface DispersionPartition {
  id: string;
  /** The partition's tokens in the texts searched (the filters' subcorpus). */
  tokens: number;
  hits: number;
}

/**
 * Where the hits fall: Gries' DP over the parts (regions of an s-attribute, such as texts) and over
 * the partitions, and the hits in equal stretches of the corpus. Under filters, the parts are those
 * of the filters' subcorpus (each region's tokens in it), and the size shares are of its tokens.
 */
export interface DispersionResult {
  corpus: string;
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Hits in the partitions that answered. */
  total: number;
  /** False when a partition failed (its hits are missing from every count). */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  parts_attribute: string;
  /**
   * Tokens of the texts searched (the filters' subcorpus), in the partitions that answered: the
   * parts' size shares are of these.
   */
  tokens: number;
  /**
   * Parts of the (sub)corpus: the regions with tokens in it, and each partition's tokens outside
   * any.
   */
  parts: number;
  parts_with_hits: number;
  /**
   * Gries' DP over the parts (0: the hits spread as the parts' sizes do; near 1: all in one small
   * part); None when a partition failed.
   */
  dp: number | null;
  /** DP / (1 - the smallest part's share), Lijffijt and Gries (2012). */
  dp_norm: number | null;
  /** DP over the partitions. */
  dp_partitions: number | null;
  bins: DispersionBin[];
  partitions_hits: DispersionPartition[];
}

/**
 * Hits per value of an s-attribute at the match: CQP's ``group A match ATT``, with subcorpus sizes.
 */
export interface DistributionResult {
  corpus: string;
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Hits in the partitions that answered. */
  total: number;
  /** False when a partition failed (its hits are missing from every count). */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  by: string;
  /** Hits outside every region of the attribute. */
  outside: number;
  /** The values look like numbers and are sorted as numbers. */
  numeric: boolean;
  /**
   * Every value is listed, also those without hits (an attribute with more than 10,000 values, such
   * as an id, lists those with hits).
   */
  all_values: boolean;
  truncated: boolean;
  /** The first row of this page in the whole table (0-based). */
  offset: number;
  /** Rows of the whole table (one per value): page with offset and limit. */
  rows_total: number;
  rows: DistributionRow[];
}

export interface DistributionRow {
  value: string;
  hits: number;
  /** Size of the subcorpus with this value, in tokens. */
  tokens: number;
  /** Hits per million tokens of that subcorpus. */
  per_million: number;
  /** Regions with this value. */
  regions: number;
  /** Of those, regions with at least one hit. */
  regions_with_hits: number;
  /** The subcorpus size is summed over every partition. */
  size_exact: boolean;
  /** The search page showing these hits (the query with a filter). */
  concordance: string;
  /** Several corpora searched (corpus=a,b): the hits and size of this value in each. */
  corpora: Record<string, CorpusShare>;
}

/** Every ``code`` a problem+json answer of cowbird can carry. */
export type ErrorCode =
  | "internal"
  | "http_error"
  | "invalid_request"
  | "bad_parameter"
  | "unauthorized"
  | "forbidden"
  | "csrf_failed"
  | "not_found"
  | "unknown_corpus"
  | "unknown_partition"
  | "unknown_attribute"
  | "out_of_range"
  | "limit_exceeded"
  | "query_syntax"
  | "unsupported"
  | "query_failed"
  | "bad_host"
  | "too_large"
  | "request_timeout"
  | "too_many_requests"
  | "conflict"
  | "not_allowed"
  | "client_gone"
  | "timeout"
  | "deadline"
  | "busy"
  | "nodes_unavailable"
  | "unavailable"
  | "database_unavailable"
  | "engine_error"
  | "corpus_data";

/** What a query would find and cost, known before it runs. */
export interface EstimateResult {
  corpus: string;
  /** The CQP that would run on every partition. */
  cqp: string;
  /**
   * Estimated hits over all partitions (None: the query cannot be estimated — MU or TAB — or its
   * sample took longer than an estimate may: then seconds is a lower bound).
   */
  hits: number | null;
  /** The estimate is the exact count (the query is cheap, or its result cached). */
  exact: boolean;
  /** Estimated seconds until the exact total. */
  seconds: number | null;
  /** fast (under a second), seconds (under a minute) or minutes. */
  time_class: "fast" | "seconds" | "minutes" | null;
  /**
   * The query is estimated to take longer than this server's confirm_seconds: the search page asks
   * before it runs it.
   */
  confirm: boolean;
  /** Partitions that gave no estimate. */
  failed: string[];
  elapsed_ms: number;
}

/** Hits counted by the value of a p-attribute over a span: CQP's ``count A by ATT on SPAN``. */
export interface FrequencyResult {
  corpus: string;
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Hits in the partitions that answered. */
  total: number;
  /** False when a partition failed (its hits are missing from every count). */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  by: string;
  on: string;
  /**
   * The keys counted, each SPAN.ATTRIBUTE (matchend[1].pos): several at once for
   * by=word,pos&on=match[-1],matchend[1].
   */
  keys: string[];
  fold: string;
  /**
   * Tokens of the texts searched (the subcorpus the filters choose, or the corpus) in the
   * partitions that answered: the base of each row's per_million (None: a node could not say, and
   * per_million is 0).
   */
  tokens: number | null;
  /** Hits counted (those where the span is set). */
  counted: number;
  /** Hits without the anchor (no target or keyword), not counted. */
  unset: number;
  /** Distinct values (a lower bound when truncated). */
  distinct: number;
  /** A node had more distinct values than it lists; rare values are missing. */
  truncated: boolean;
  /** The first row of this page in the whole table (0-based). */
  offset: number;
  /** Rows of the whole table (values with at least min hits): page with offset and limit. */
  rows_total: number;
  rows: FrequencyRow[];
  /**
   * Several corpora searched: the tokens of each one's texts searched (its subcorpus under the
   * filters), the base of the rows' corpora_per_million (None: a node could not say).
   */
  corpora_tokens: Record<string, number | null>;
}

export interface FrequencyRow {
  /**
   * The value (several tokens' values joined by spaces), folded if asked; by several keys, their
   * values joined by ' / '.
   */
  value: string;
  /** The value of each key (one for a breakdown by one attribute). */
  values: string[];
  frequency: number;
  /** Share of the hits counted. */
  share: number;
  /** Frequency per million tokens of the corpus. */
  per_million: number;
  /**
   * The search page showing these hits (single-token spans; None for a value no CQP string can
   * hold, one with a control character).
   */
  concordance: string | null;
  /** Several corpora searched (corpus=a,b): the frequency in each. */
  corpora: Record<string, number>;
  /**
   * Several corpora searched: the frequency per million tokens of each one's texts searched
   * (corpora_tokens; 0 when a node could not say its size).
   */
  corpora_per_million: Record<string, number>;
}

/** A hit's GDEX score and what made it (``cowbird.core.gdex``): enough to recompute it by hand. */
export interface GdexScore {
  /**
   * The weighted mean of the rules' values, 0 to 1 (the order compares 1,000,000 - round(score x
   * 1,000,000)); 0 for a hit outside any region.
   */
  score: number;
  /** The integer the hits were sorted on (ascending): 1,000,000 - round(score x 1e6). */
  key: number;
  /** The s-attribute whose region around the match's first token was scored (s). */
  region: string;
  /** Tokens of that region (0: the hit is outside any). */
  tokens: number;
  /** The match's first token, counted from the region's first (0). */
  match_start: number;
  /** The match's last token, counted the same way (it may lie past the region). */
  match_end: number;
  /**
   * Each rule's value, 0 to 1: length, whole, rare, numbers, urls, brackets, edge (empty outside
   * any region).
   */
  values: Record<string, number>;
  /** Each rule's weight ([corpora.gdex.weights]). */
  weights: Record<string, number>;
  /** The region's tokens counted as rare words, in order. */
  rare: string[];
  /** Its tokens counted as numbers or symbols. */
  numbers: string[];
  /** Its tokens taken for a URL, a domain or an e-mail address. */
  urls: string[];
}

/** The logged-in user's last searches in the browser, newest first (at most 100). */
export interface History {
  data: PastSearch[];
}

/**
 * One hit: global positions, the KWIC strings, the match's attributes and metadata, its static
 * link.
 */
export interface Hit {
  /** The corpus the hit is in (one of several searched at once: corpus=a,b). */
  corpus: string;
  /**
   * Global position of the first token of the match (in the corpora searched: with corpus=a,b, b's
   * positions follow a's).
   */
  position: number;
  /** Global position of the last token of the match. */
  matchend: number;
  partition: string;
  /** Left context, tokens separated by spaces (with inline=: word/attribute/...). */
  left: string;
  match: string;
  /** Right context, tokens separated by spaces. */
  right: string;
  /** Each show= attribute of the match (tokens separated by spaces). */
  attributes: Record<string, string>;
  /** Each meta= attribute at the match (None outside any region). */
  meta: Record<string, string | null>;
  /**
   * Path of the static link: /ref/<corpus>/<position>, with ?end=<matchend> when the match is
   * longer than one token (the hit's own corpus and its position there).
   */
  ref: string;
  /**
   * With boundaries=text,s: where a region of those s-attributes begins or ends inside the line.
   */
  breaks: Boundary[];
  /**
   * With sort=gdex: the hit's score and each rule's value, recomputed from its sentence by the
   * written rules (cowbird.core.gdex) and checked against the key the nodes sorted on; null
   * otherwise.
   */
  gdex: GdexScore | null;
}

export interface InputList {
  /** WARC and ARC files in the server's input folder, relative to it. */
  data: string[];
}

export interface JobList {
  data: JobOut[];
}

export interface JobOut {
  id: string;
  kind: string;
  name: string;
  owner: string;
  created: string;
  language: string | null;
  pages: number | null;
  seeds: string[];
  /** queued, running, stopping, stopped, finished or failed. */
  state: string;
  stage: string | null;
  /** The stages finished: crawl, build. */
  done: string[];
  error: string | null;
  crawl: CrawlProgress | null;
  crawl_report: CrawlReport | null;
  build: BuildProgress | null;
  /** The corpus is made: it may be published. */
  built: boolean;
  /** The name of the corpus published from it. */
  published: string | null;
  /** The last lines of the job's log. */
  log: string[];
}

/**
 * Keywords of a corpus or subcorpus against a reference, exact over every partition that answered.
 */
export interface KeywordResult {
  /** Every partition answered. */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  corpus: string;
  filters: string[];
  reference: string;
  reference_filters: string[];
  attribute: string;
  min: number;
  reference_min: number;
  order: string;
  /** Tokens of the target (sub)corpus. */
  tokens: number;
  reference_tokens: number;
  /** Items reaching their minimum in the target or the reference. */
  compared: number;
  /** The significance level asked for. */
  p: number;
  /** bonferroni (p divided by the items compared) or none. */
  correction: string;
  /** The least |log-likelihood| listed (0: every item). */
  critical_log_likelihood: number;
  /** The least |Log Ratio| listed. */
  min_log_ratio: number;
  /** The simple-maths score's constant k. */
  smoothing: number;
  /** Items compared and not listed: not significant, or below min_log_ratio. */
  not_significant: number;
  /** Items that pass the filter (the rows are the first limit of them). */
  listed: number;
  /** The partitions counted for the target (in partitions). */
  target_partitions: string[];
  /**
   * The partitions counted for the reference (the same ones when the reference is other texts of
   * the corpus).
   */
  reference_partitions: string[];
  rows: KeywordRow[];
}

export interface KeywordRow {
  value: string;
  /** In the target. */
  frequency: number;
  reference_frequency: number;
  /** Per million tokens of the target. */
  per_million: number;
  reference_per_million: number;
  /** Signed: negative where the item is rarer in the target. */
  log_likelihood: number;
  /** log2 of the ratio of relative frequencies (a zero counts as 0.5). */
  log_ratio: number;
  /** Its 95 % confidence interval: lower bound. */
  log_ratio_low: number;
  log_ratio_high: number;
  /** (per million in the target + k) / (per million in the reference + k). */
  simple_maths: number;
  /** %DIFF: the difference of the relative frequencies in % of the reference's. */
  diff: number;
  /** The search page with the item's hits in the target. */
  hits: string | null;
}

/**
 * A saved search's categorised lines (corpus order), the names of its categories and how many lines
 * each has.
 */
export interface LineCategories {
  name: string;
  corpus: string;
  url: string;
  /** The names of categories 1-9 ('' where unnamed). */
  labels: string[];
  /** Lines in categories 1-9. */
  counts: number[];
  lines: CategoryLine[];
}

/** One concordance line widened in place: its tokens, each the word and the attributes shown. */
export interface LineContext {
  corpus: string;
  position: number;
  /** Last position of the match (the position itself for one token). */
  matchend: number;
  /** The region the context stays in (s, p, text), or None. */
  region: string | null;
  /** At most this many tokens each side. */
  tokens: number;
  /** What each token holds: the word, then the attributes shown. */
  attributes: string[];
  left: string[][];
  match: string[][];
  right: string[][];
  /** The words alone, as text. */
  text: RefText;
  /** The region (or text) goes on before the context shown. */
  more_before: boolean;
  /** The region (or text) goes on after the context shown. */
  more_after: boolean;
  /**
   * Where texts and sentences begin or end inside the line: per s-attribute (text, s), the tokens —
   * counted from the first of left over left, match and right — that a boundary comes before.
   */
  breaks: Record<string, number[]>;
}

export interface NewJob {
  /** crawl: from seed URLs, then a build; build: of WARC files. */
  kind: "crawl" | "build";
  /** The corpus's name (lowercase letters, digits, _). */
  name: string;
  /**
   * The corpus's language: de or en.
   * @default "de"
   */
  language?: string;
  /** Seed URLs (crawl). */
  seeds?: string[];
  /**
   * The crawl's page budget.
   * @default 1000
   */
  pages?: number;
  /** WARC files or folders in the server's input folder (build). */
  inputs?: string[];
  /** The ids of your uploaded WARC files (POST /api/v1/uploads) (build). */
  uploads?: string[];
}

export interface Part {
  pages: number;
  good: number;
  good_share: number;
}

/** How one partition answered. */
export interface PartitionResult {
  id: string;
  status: "ok" | "failed";
  /** Hits in this partition (None when it failed). */
  total: number | null;
  /** Why it failed. */
  error: string | null;
}

/**
 * One partition of a corpus: its tokens are the global positions ``offset`` .. ``offset + size -
 * 1``.
 */
export interface PartitionSummary {
  id: string;
  /** Tokens in the partition. */
  size: number;
  /** Global position of its first token. */
  offset: number;
}

/** One search of the user's history, with the URL that runs it again. */
export interface PastSearch {
  /** When (ISO 8601, UTC). */
  at: string;
  corpus: string;
  q: string;
  syntax: string;
  ignore_case: boolean;
  filters: string[];
  total: number;
  /** The search page URL of this search. */
  url: string;
}

/** An error: RFC 9457 members plus a stable ``code``; query errors add where the problem is. */
export interface Problem {
  /** @default "about:blank" */
  type?: string;
  /** A short summary of the kind of problem. */
  title: string;
  /** The HTTP status code. */
  status: number;
  /** What went wrong in this request, in words. */
  detail: string;
  /** Stable machine-readable identifier of the kind of problem. */
  code: ErrorCode;
  /** Query errors: the message without the caret picture. */
  message?: string | null;
  /** Query errors: 0-based offset of the problem in the query. */
  offset?: number | null;
  /** Query errors: 1-based line of the problem. */
  line?: number | null;
  /** Query errors: 1-based column of the problem. */
  column?: number | null;
  [key: string]: unknown;
}

export interface Publish {
  /**
   * public, login or group:NAME.
   * @default "public"
   */
  access?: string;
  /** @default "" */
  title?: string;
}

export interface PublishedCorpusOut {
  name: string;
  access: string;
  partitions: string[];
}

/**
 * A token: all its tests hold (none: any token), repeated from min to max times (max null: no
 * bound).
 */
export interface QueryBox {
  /** @default [] */
  tests: BoxTest[];
  /** @default 1 */
  min: number;
  /** @default 1 */
  max: number | null;
}

export interface QueryBoxes {
  tokens: QueryBox[];
  /** The region the match stays within (s, text). */
  within: string | null;
}

/** A partition has counted (or failed): the hits counted so far, a lower bound of the total. */
export interface QueryCount {
  event: "count";
  partition: PartitionResult;
  total_at_least: number;
  /** Partitions counted or failed. */
  counted: number;
  partitions: number;
  failed: string[];
  elapsed_ms: number;
}

/**
 * The page of hits asked for, before every partition has counted (the result's are authoritative).
 */
export interface QueryPage {
  event: "page";
  offset: number;
  elapsed_ms: number;
  hits: Hit[];
}

/**
 * A preview: the exact total over all partitions and up to ``limit`` hits in global corpus order.
 */
export interface QueryResult {
  corpus: string;
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Hits in the partitions that answered. */
  total: number;
  /**
   * Tokens of the texts searched, in the partitions that answered: the subcorpus the filters
   * choose, or the corpus (None: a node could not say).
   */
  tokens: number | null;
  /**
   * Hits per million tokens of the texts searched (tokens): with filters, the rate within them.
   * @default 0.0
   */
  per_million: number | null;
  /**
   * Hits per million tokens of the whole corpus (the partitions that answered), filters or not.
   * @default 0.0
   */
  corpus_per_million: number;
  /** False when a partition failed (its hits are missing). */
  complete: boolean;
  /** Partitions that failed. */
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  offset: number;
  /** The sample size asked for, or None for a page of hits. */
  sample: number | null;
  hits: Hit[];
  /** Advice when the query probably did not mean what it found. */
  hint: string | null;
  /**
   * The anchors the query marks (@ target, @1 keyword): what the hits can also be sorted and
   * counted on (sort=target.lemma, on=keyword).
   */
  anchors: ("target" | "keyword")[];
  /** The sort applied, as asked, with its direction (right1.word desc); None: corpus order. */
  sort: string | null;
  /** The same in CQP's terms (matchend[1].word desc). */
  sort_cqp: string | null;
  /** The seed of a random sample or a random order (the same seed, the same hits). */
  seed: number | null;
  /**
   * Each corpus searched, in order (one; several with corpus=a,b): its total and rate per million.
   */
  corpora: CorpusTotal[];
}

/** A streamed search has started. */
export interface QueryStarted {
  event: "started";
  corpus: string;
  /** The CQP that runs on every partition. */
  cqp: string;
  partitions: number;
  /** The anchors the query marks. */
  anchors: ("target" | "keyword")[];
  /** Whether the page and the counts come before the result (false: a sorted page, or a sample). */
  early: boolean;
  /** Whether it runs as background work (a background event follows). */
  background: boolean;
}

/** A static link resolved: the sentence at a global position, wider context, metadata, citation. */
export interface RefResult {
  corpus: string;
  title: string;
  position: number;
  /** Last position of the match shown (the position itself for one token). */
  matchend: number;
  /**
   * The match's positions in words, as the page and the citation say them: 'position 479',
   * 'positions 479–481'.
   */
  positions: string;
  /**
   * When the text was crawled, where the corpus records it (text_crawl_date, or [calf]
   * date_attribute).
   */
  crawl_date: string | null;
  /** The day this was retrieved from cowbird (ISO 8601), as the citation says. */
  retrieved: string;
  partition: string;
  sentence: RefText;
  /** Up to 40 tokens each side, inside the text. */
  context: RefText;
  /** The text goes on before the context shown. */
  more_before: boolean;
  /** The text goes on after the context shown. */
  more_after: boolean;
  meta: Record<string, string | null>;
  citation: string;
  /** The permanent URL of this position. */
  link: string;
  /** Said when the position lies outside any text. */
  note: string | null;
}

export interface RefText {
  left: string;
  match: string;
  right: string;
}

/**
 * A search to keep: its name and the search page's URL (``/?corpus=…&q=…``, with the view, sort
 * and tab the page keeps in it).
 */
export interface SaveSearch {
  /** Its name (a search of the same name is replaced). */
  name: string;
  /** The search page's URL: /?corpus=…&q=…. */
  url: string;
}

/** A subcorpus to keep: a name, its corpus and the filters that choose its texts. */
export interface SaveSubcorpus {
  name: string;
  corpus: string;
  /** Filters as filter= takes them: ATTR~REGEX, ATTR=VALUE, ATTR:FROM..TO (!~ and != negate). */
  filters: string[];
  /** Share it with this group of yours (none: only you). */
  group?: string | null;
}

/**
 * A saved search: its name, the search page URL that runs it, and its share link, which works for
 * whoever may read its corpus.
 */
export interface SavedSearchOut {
  /** What names it in /api/v1/saved/<id>/categories, /labels, DELETE and categories=. */
  id: string;
  name: string;
  corpus: string;
  url: string;
  /** The share link: /s/<id>, answered with the search page. */
  link: string;
  /** When it was saved (ISO 8601, UTC). */
  at: string;
}

/** The user's saved searches, by name. */
export interface SavedSearches {
  data: SavedSearchOut[];
}

export interface SketchCollocateRow {
  /** The collocate (a value of the grammar's attribute, lemma by default). */
  value: string;
  /** Instances of the relation pairing headword and collocate: f(x, R, y). */
  f: number;
  /** The collocate's instances in the relation with any headword: f(R, y). */
  total: number;
  /** 14 + log2(2 f(x, R, y) / (f(x, R) + f(R, y))) (Rychlý 2008). */
  log_dice: number;
  /**
   * The search page with these instances: the relation's CQP with headword and collocate
   * constrained, under the sketch's strategy ((?traditional) ...): one hit per instance, f in all.
   */
  concordance: string | null;
}

export interface SketchDifferenceRelation {
  /** The relation's id in the grammar (what relation= names). */
  name: string;
  /**
   * The grammar's *LABEL with both words written in, headword/other (objects of "buy/sell"); the
   * name when the grammar gives no label.
   */
  label: string;
  /** The headword's instances in the relation. */
  head_total: number;
  /** The other word's instances in the relation. */
  other_head_total: number;
  shared_total: number;
  only_first_total: number;
  only_second_total: number;
  /** Collocates of both, from those preferring the headword to those preferring the other word. */
  shared: SketchDifferenceRow[];
  /** Collocates of the headword only, most salient first. */
  only_first: SketchDifferenceRow[];
  /** Collocates of the other word only. */
  only_second: SketchDifferenceRow[];
}

export interface SketchDifferenceResult {
  corpus: string;
  headword: string;
  /** The attribute of headwords and collocates (the grammar's *WSATTR). */
  attribute: string;
  grammar: string;
  filters: string[];
  /**
   * The headword's frequency in the texts searched: the corpus, or the filters' subcorpus (every
   * partition that answered).
   */
  frequency: number;
  min_freq: number;
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  other: string;
  other_frequency: number;
  tokens: number;
  relations: SketchDifferenceRelation[];
}

export interface SketchDifferenceRow {
  value: string;
  /** Instances with the headword (0: none). */
  f: number;
  /** Instances with the other word (0: none). */
  other_f: number;
  /** logDice with the headword (None: not a collocate of it). */
  log_dice: number | null;
  /** logDice with the other word. */
  other_log_dice: number | null;
  /**
   * log_dice - other_log_dice, a missing score counted as 0: positive where the headword prefers
   * the collocate.
   */
  difference: number;
  /** The search page with the headword's instances. */
  concordance: string | null;
  /** The search page with the other word's instances. */
  other_concordance: string | null;
}

export interface SketchRelationResult {
  /** The relation's id in the grammar (what relation= names). */
  name: string;
  /**
   * What users read: the grammar's *LABEL with the headword written in (objects of "buy"); the name
   * when the grammar gives no label.
   */
  label: string;
  /** The CQP the nodes ran: headword at @ (target), collocate at @1 (keyword). */
  queries: string[];
  /** The headword's instances in the relation: f(x, R). */
  head_total: number;
  /**
   * head_total / the headword's frequency (a headword may stand in a relation with several
   * collocates: it can exceed 1).
   */
  share: number | null;
  /** The relation's instances in the corpus (or subcorpus), every headword. */
  instances: number;
  /** Collocates the headword has in the relation (before min_freq and limit). */
  distinct: number;
  /** Collocates, the most salient (highest logDice) first. */
  rows: SketchCollocateRow[];
}

/** Your subcorpora and those shared with a group of yours, by name. */
export interface SubcorpusList {
  data: SubcorpusOut[];
}

/** A saved subcorpus: whose, shared with which group, and its size when it was saved. */
export interface SubcorpusOut {
  /** What subcorpus= takes. */
  id: string;
  name: string;
  corpus: string;
  filters: string[];
  /** Its tokens when saved. */
  tokens: number;
  texts: number | null;
  owner: string;
  /** The group it is shared with (null: only its owner sees it). */
  group: string | null;
  /** You own it (only the owner changes or deletes it). */
  mine: boolean;
  /** When it was saved (ISO 8601, UTC). */
  at: string;
  /** The search page with its filters: /?corpus=…&filter=…. */
  search: string;
}

/**
 * A subcorpus's size (the texts its filters choose; none: the whole corpus), exact over every
 * partition
 * that answered, and with ``values`` an s-attribute's values in it with their sizes.
 */
export interface SubcorpusResult {
  /** Every partition answered. */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  corpus: string;
  /** The filters choosing it (a saved subcorpus's first). */
  filters: string[];
  /** Tokens in the subcorpus. */
  tokens: number;
  /** Texts (regions of text) with tokens in it; null: the corpus has no text. */
  texts: number | null;
  /** Tokens of the whole corpus. */
  corpus_tokens: number;
  /** Texts of the whole corpus. */
  corpus_texts: number | null;
  /** The subcorpus's tokens, per cent of the corpus's. */
  per_cent: number;
  /** The s-attribute whose values are listed. */
  attribute: string | null;
  values: SubcorpusValue[];
  /** Values in the subcorpus (that pass match): page with offset and limit. */
  values_total: number;
}

export interface SubcorpusValue {
  value: string;
  /** Tokens of the subcorpus in regions with this value. */
  tokens: number;
  /** Regions with this value that hold tokens of the subcorpus (texts, for text_*). */
  texts: number;
  /** Its tokens, per cent of the subcorpus's. */
  per_cent: number;
  /** The filter choosing exactly this value: ATTR~REGEX. */
  filter: string;
}

export interface ThesaurusResult {
  corpus: string;
  headword: string;
  /** The attribute of headwords and collocates (the grammar's *WSATTR). */
  attribute: string;
  grammar: string;
  filters: string[];
  /**
   * The headword's frequency in the texts searched: the corpus, or the filters' subcorpus (every
   * partition that answered).
   */
  frequency: number;
  min_freq: number;
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  /** The headword's contexts: relation and collocate with a positive logDice. */
  contexts: number;
  /** Words sharing at least one of them (the rows are the most similar). */
  candidates: number;
  rows: ThesaurusRow[];
}

export interface ThesaurusRow {
  word: string;
  /** Similarity to the headword, 0 to 1 (Rychlý and Kilgarriff 2007). */
  score: number;
  /** Contexts (relation and collocate) both words have. */
  shared: number;
  /** The word's sketch (the API's; the same filters and relations). */
  sketch: string;
}

export interface Translation {
  /** The query as given. */
  q: string;
  /** The canonical CQP that runs: translated, with the case switch and the filters. */
  cqp: string;
  /** The anchors the query marks (@ target, @1 keyword). */
  anchors: ("target" | "keyword")[];
}

export interface TrendPoint {
  /** 2012 (a year or a decade: its first year) or 2012-05 (a month). */
  period: string;
  hits: number;
  /** Tokens of the (sub)corpus dated in this period. */
  tokens: number;
  /** Regions of the date attribute (texts) with tokens in this period. */
  texts: number;
  /** Hits per million of those tokens (None: no text at all). */
  per_million: number | null;
  /** The 95 % Wilson score interval of the rate: lower bound. */
  low: number | null;
  /** Its upper bound. */
  high: number | null;
  /** Fewer tokens than sparse_below (or none): a rate that says little. */
  sparse: boolean;
  /** The search page with this period's hits (None without text). */
  concordance: string | null;
}

/** Relative frequency per period of one or more queries, exact over every partition. */
export interface TrendResult {
  corpus: string;
  /** The s-attribute whose values are the dates. */
  by: string;
  /** The periods counted in, as period= asked. */
  period: "year" | "month" | "decade";
  filters: string[];
  sparse_below: number;
  /** Tokens of the (sub)corpus searched. */
  tokens: number;
  /** Of those, tokens in regions whose value holds no date. */
  undated_tokens: number;
  /** The hits of every query, in the partitions that answered. */
  total: number;
  /** Every partition answered every query and the sizes. */
  complete: boolean;
  /** The partitions that did not answer (a query or the sizes). */
  failed: string[];
  series: TrendSeries[];
  elapsed_ms: number;
}

/** One query's trend. */
export interface TrendSeries {
  q: string;
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Hits in the partitions that answered. */
  total: number;
  /** Hits in regions whose value holds no date, or outside every region. */
  undated: number;
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  points: TrendPoint[];
}

/** The type/token ratio of the hits per text (or other region). */
export interface TtrResult {
  corpus: string;
  /** The CQP that ran on every partition. */
  cqp: string;
  /** Hits in the partitions that answered. */
  total: number;
  /** False when a partition failed (its hits are missing from every count). */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  /** The first row of this page in the whole table (0-based). */
  offset: number;
  /** Rows of the whole table. */
  rows_total: number;
  parts_attribute: string;
  attribute: string;
  /** The metadata each part is labelled with, if any. */
  label: string | null;
  /** Parts holding hits (before min_size). */
  parts_with_hits: number;
  /** The mean TTR of the parts in the table (none without any). */
  mean_ttr: number | null;
  /** A partition had more parts with hits than it answers: some are missing. */
  truncated: boolean;
  rows: TtrRow[];
}

export interface TtrRow {
  /**
   * The part's first token (in the partition's answer: the partition's own position; in the result:
   * the corpus's).
   */
  start: number;
  /** Its last token. */
  end: number;
  /** Its value of the label attribute (none without label=). */
  label: string | null;
  /** Tokens of the hits in the part (each once, where hits overlap). */
  tokens: number;
  /** Distinct values of the attribute among them. */
  types: number;
  /** types / tokens. */
  ttr: number;
}

export interface UploadOut {
  /** Name it in a build job's uploads. */
  id: string;
  filename: string;
  bytes: number;
}

/** Calf's answer for one static link: the sentence re-found on the web, with its context. */
export interface WebContext {
  /**
   * found_*: the sentence with the hit on the page (url), in a web archive's capture or a search
   * result; changed_*: the sentence there with other words where the hit was (detail names them).
   */
  status:
    | "found_url"
    | "found_archive"
    | "found_search"
    | "changed_url"
    | "changed_archive"
    | "changed_search"
    | "not_found"
    | "fetch_error"
    | "bad_row"
    | "error";
  /** Fuzzy-match score 0-100 of the best place found. */
  score: number | null;
  /** The page the context comes from (after redirects or a search). */
  source_url: string;
  /**
   * Where the context comes from: live (the page), search, or the name of the web archive ([calf]
   * archives) whose capture holds it.
   * @default ""
   */
  source: string;
  /**
   * An archive's capture: when it was made (ISO 8601, UTC).
   * @default ""
   */
  capture_date: string;
  /**
   * An archive's capture: the URL that returns it as it was archived.
   * @default ""
   */
  capture_url: string;
  sentence: string;
  left: string;
  right: string;
  /**
   * How it was found (exact, or how many words differ), or why not (the fetch error, the nearest
   * place's difference).
   * @default ""
   */
  detail: string;
  /**
   * The sentence as the page has it.
   * @default ""
   */
  page_text: string;
}

/** The most frequent n-grams of a corpus or subcorpus, exact over every partition that answered. */
export interface WordListResult {
  /** Every partition answered. */
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  corpus: string;
  attribute: string;
  n: number;
  within: string | null;
  filters: string[];
  match: string | null;
  min: number;
  /** Tokens of the (sub)corpus in the partitions that answered. */
  tokens: number;
  /** N-grams counted there (occurrences; for n=1 the tokens). */
  ngrams: number;
  rows: WordListRow[];
  /** More n-grams than the rows shown occur at least min times. */
  more: boolean;
  /**
   * within=none: n-grams across the cuts between partitions not counted: n-1 at each cut after a
   * partition encoded without the tokens of its neighbours (neighbours.json); 0 otherwise, each
   * such n-gram completed with the next partition's first tokens.
   * @default 0
   */
  uncounted: number;
}

export interface WordListRow {
  /** The n-gram's tokens (one for a word list). */
  tokens: string[];
  /** The tokens joined by spaces. */
  value: string;
  frequency: number;
  /** Occurrences per million tokens of the texts searched (tokens). */
  per_million: number;
  /** The search page with this n-gram's hits (a CQP query, the filters). */
  hits: string | null;
}

export interface WordSketchResult {
  corpus: string;
  headword: string;
  /** The attribute of headwords and collocates (the grammar's *WSATTR). */
  attribute: string;
  grammar: string;
  filters: string[];
  /**
   * The headword's frequency in the texts searched: the corpus, or the filters' subcorpus (every
   * partition that answered).
   */
  frequency: number;
  min_freq: number;
  complete: boolean;
  failed: string[];
  partitions: PartitionResult[];
  elapsed_ms: number;
  /** Tokens of the texts searched (the filters' subcorpus) in the partitions that answered. */
  tokens: number;
  /** Every count came from tables built by cowbird sketches build. */
  saved: boolean;
  relations: SketchRelationResult[];
}
