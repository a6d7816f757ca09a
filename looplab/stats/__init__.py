"""Statistics in one home: order statistics and KS tests (`order`), bootstrap confidence
intervals and paired speedups (`intervals`)."""
