# Golden values of Hartigan's dip test from R's diptest package (Debian r-cran-diptest 0.76), for tests/test_repair.py.
# Made once with:  Rscript tests/data/make_dip_golden.R > tests/data/dip_golden.csv
# The samples are fixed formulas (no random numbers), so Python rebuilds them exactly.
library(diptest)
samples <- list(
  normal  = qnorm((1:99) / 100),
  bimodal = c(qnorm((1:50) / 51) - 3, qnorm((1:50) / 51) + 3),
  close   = c(qnorm((1:60) / 61) - 1.2, qnorm((1:60) / 61) + 1.2),
  uniform = (1:40) / 41,
  skewed  = qexp((1:80) / 81),
  three   = c(qnorm((1:30) / 31) - 5, qnorm((1:30) / 31), qnorm((1:30) / 31) + 5)
)
cat("sample,n,dip,p_value\n")
for (k in names(samples)) {
  t <- dip.test(samples[[k]])
  cat(sprintf("%s,%d,%.12g,%.12g\n", k, length(samples[[k]]), t$statistic, t$p.value))
}
