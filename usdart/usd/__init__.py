"""Everything that touches USD (pxr): the importer, write-back, stage controls, authoring, schema plugin."""
