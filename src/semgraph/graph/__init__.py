"""The code graph: schema and dialect (Memgraph / Neo4j), writer, reader."""
