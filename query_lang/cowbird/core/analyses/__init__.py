"""The declared analyses of a query's hits: one module each, named as the analysis (its route is
``GET /api/v1/<module>``), declaring it with ``cowbird.core.declared.declare`` — its parameters,
a partition's answer and its check, the merge and the result. Its computation is the module of the
same name in ``cowbird.engines.analyses``; its view on the page ``static/analysis-<module>.js``.
``docs/architecture.md`` (*Adding an analysis*) walks through ``ttr``, the worked example.
"""
