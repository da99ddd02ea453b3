"""Files and clusters: models and data files, Parquet datasets, Dask clusters."""
