# Golden Gower dissimilarities from R's cluster::daisy(metric = "gower"), for tests/test_gower.py (issue 40).
# Made once with Debian's r-base-core and r-cran-cluster:   cd tests/data/gower && Rscript make_goldens.R
# Each case writes <case>_X.csv (the table; "NA" = missing), <case>_types.csv (column -> the type daisy used) and
# <case>_daisy.csv (the n x n dissimilarity matrix) and <case>_levels.csv (each ordered factor's levels, lowest first).
library(cluster)
write_case <- function(name, df, types = list(), weights = rep(1, ncol(df))) {
  d <- suppressWarnings(daisy(df, metric = "gower", type = types, weights = weights))
  write.csv(df, paste0(name, "_X.csv"), row.names = FALSE, na = "NA")
  write.csv(data.frame(column = names(df), type = attr(d, "Types"), weight = weights),
            paste0(name, "_types.csv"), row.names = FALSE)
  write.csv(format(as.matrix(d), digits = 17), paste0(name, "_daisy.csv"), row.names = FALSE, quote = FALSE)
  ord <- names(df)[sapply(df, is.ordered)]
  write.csv(data.frame(column = ord, levels = sapply(ord, function(c) paste(levels(df[[c]]), collapse = "|"))),
            paste0(name, "_levels.csv"), row.names = FALSE)
}
# 1. cluster's own mixed dataset `flower` (18 plants: 3 binary, 1 nominal, 2 ordinal, 2 numeric), with 6 values
#    blanked; V1 and V3 asymmetric binary, V2 symmetric (as in daisy's documentation example)
data(flower)
f <- flower
f[2, "V7"] <- NA; f[5, "V4"] <- NA; f[7, "V5"] <- NA; f[11, "V8"] <- NA; f[13, "V1"] <- NA; f[16, "V6"] <- NA
write_case("flower", f, types = list(asymm = c("V1", "V3"), symm = "V2"))
# 2. a table of every kind daisy reads by default: numeric with NA, a constant column, logical (asymmetric binary),
#    a factor with NA, an ordered factor whose top level never occurs; unequal weights
set.seed(39)
n <- 40
m <- data.frame(x = round(rnorm(n, 10, 3), 3), const = 2.5, flag = sample(c(TRUE, FALSE, NA), n, TRUE, c(.45, .45, .1)),
                colour = factor(sample(c("red", "green", "blue", NA), n, TRUE, c(.3, .3, .3, .1))),
                size = factor(sample(c("S", "M", "L"), n, TRUE), levels = c("S", "M", "L", "XL"), ordered = TRUE),
                y = round(rexp(n), 4))
m$x[c(3, 17)] <- NA
m$y[c(5, 17)] <- NA
write_case("mixed", m, weights = c(1, 1, 2, 1, 0.5, 3))
