"""A bitmap font for the pictures: printable ASCII (32-126), anti-aliased 8-bit
coverage, 7 x 13 pixel cells, baseline 10 rows down. Rendered
from DejaVu Sans Mono by tools/make_font.py (generated: do not edit).
"""

import base64
import zlib

import numpy as np

CELL_W, CELL_H, BASELINE = 7, 13, 10

_DATA = (
    "eNrNmXtczdkWwNep0/tdejAkKjKXxiP0QojMxZihmWnC9QpzRyNjHvK4Qo13XoP6zJCmQZimGmIMNaU84pRSTI9j6vSUVE56SBO/"
    "u9f6CXHq/Mrc+dz1x/6e/Tzrt397r732+gH8beJ6WwFcpIRh2QSbywo6KJfBSVaZr+Avkvc32fzCcGCMrx/M5VBCwUACOWIAj71v"
    "JAG0YFkLQGLP3ZMBdNLhhrbQsTdj4pH7hPMHKHGjXOH0bTQt1xp/tccfuxflIrZMLAKor2m+NfZZv2d4Vbyq8rFzkv2cYBCpeldL"
    "37LZbw6gsmSNOoDttyNY3cT1mv51V01VADItt/mwgtV1EgshOrtIn8QyRPuqYm7jGkxVfrjnxOC7a7C0+9LFR6fBjEsRDssv9tVP"
    "lIB4T1WZf6aboPmwu6gArys+AZiqSo0QU2KpLHgFIXrWiwj2J0zmm6jmUweYH9DewOI0Y+LSrwkW5SJiwQDChbcJyW+/UNidb+JH"
    "HcTpxsqVD8eGxy3C/7kawDqqLEiNEKgG4hMW4ZNXtzZ5bbG5+BybaZXbtS3838gUThexRELz8vPY1xnLguPi/h5DNrflRQiSL3di"
    "qi7rhVh4iDZNHq2JD2KowfWRZAsSKZPkgenIDOXjDs95eFyT7eHPTC8uA6s6NfgoCVzzAJyk4JrrdNVZygrF4MXMVOaybsnLsEPT"
    "CU1BKkdxnCP9uC0Q29mqkQkZWeQnqwnTBMv9fSwkK6lkWzCmurkOLFU7vQQXfTTWiKPWkn3HBRkrzFznyo/rgeoP1kZx6zFvHPc5"
    "S2XcGTJX3c/w/+d5AUatNOsetw/U15fWRBoKfIs7OZy6EUcQagmWiIBZugxvngbEF7Rz0IzqUstWKJVS1m0gA2+BW3G/OkwLp6tv"
    "yjrektEUWCb9B1w5rnK/hqChe51t4jwBzoaa4PPLcUBwuh7dcLkfjH/sqb3xNAyoBRhSAKLi6Vqb2A5yyGhIsREyshs+bAL9PLAQ"
    "U727+oiPI6gsnXbz8ALa2t/Re9SrtRQ40wuKGlNsQedPF629kaBW6qi5ZyvAuDrumg4Y3RmtsycMxt1ib6IIrBpH6+w6z8y0rCHJ"
    "VtDQH5fUHNCAPrVDDE+ugImpAN6J0Ef+lsFP+ewEK6/eyvsOC3CuRUMK3wOI5yoD/nI70QUbIrT76xpVA58LNuIpx9PWWEOgnI5G"
    "8dQTaaut8ZfhwmSb17Sez44XBbmuyopDY/FhVd3DsjaSVdX/nrNRHX8wa9MAWBE+TqVzo8VyzSm0UI1jNtEWkk5C433jY8yMTaE2"
    "H0a18TGEnjx9TjXkOIFG7kLdUb+LF29hJd+OiLYdeLM87t1r4uhpOpGeWRoxU7WPep60H3irPNZzAR0VoJYaZE7Tv6/i4aL2xl7H"
    "9aaTJOZT1LnA7TwughC1agOAc9Mg1gv0H7GpjoQPkwH6ydWOoLuT7y5A6Z4c9zB1MPRsAbXVCQj1wFgs5MrsMKf5SToC1DkjrPtX"
    "tQg7ZLgLmhC9iNrb4wAOxna3DAL95h5k7quoaggPgz+pECJiulszk254pA47KBd37mHWAoabGs7S+Qxst1wkOFe8iLmXsIlj3kLW"
    "oenmYmGvUc4entkJOb8XWsEKj71S+LyuStDQSaxlE4MXn/N6Vnj4lcI2ECB9zz1MGwSijC3GQ5bD6HI6EX3i+QV8nj2+HMaUiKCn"
    "HETZAQYj5GyVJDRJ5wmaazaRDqUvA3d2aTt1PIRIFRsFbzquufylUClaOwgQ1pJ/P/XtQ/SnBXh7G0yvUgHjSHnhDBA6IZNu92YY"
    "U9CP5UYUDmKF92pCsK5h6l1HajIrT4tant5J6CUfI2TsXLfOAl+ElRDT3GIBazm7zRI/SJbZbV53bui+23ab/cNjXBGTikUIdPde"
    "giBnwRMGysCtJoGQltyf8NFOgnrucARs2kGwqiLAaUHuJDhnyY/pgmbVHONTu2HMHTbzf4A36z6wGWZKAAY9okKPP0CrerbRz3sA"
    "RmXXntATuNEf4d1VbqO+tFKEm1mHM8WcH+a45hvj29nvwrRmSpDW3/BaF7TRupHXOh80UettTOubj2+Q1uYJLh0HWjiu5qgehk/M"
    "kzdSFGX5SYRJ/Bqs48JUMGcvG051XpcJousfCtHaM09+yBDM77vqec2GoXn8VfnsuU/o6Bm6PIs3Fw63wHZrH92NCaCy9I/6RDuh"
    "ho/j5rYTJ+oISsWBrSO3m4oxDJENA4vY0S4BnWo3/b1hAO9K68/2EDI03lxU7g9wy2LeaAGI75vDym8ATnhDAvMZ5oRpVrMLgJnM"
    "/SS2vRpDx8vaJ70EaV2NPsi67VdGMYQtDJ85p1E1fsyqVd9k2EstZoQmLvK5C4POx/eLlYBmw3YoPQJQ6AlxglxVl0ItsL5jDgfW"
    "QRw7I02KP01C/+kT3hGLkaE7P11iWWwC+sXDIOA7CGG7RrvIUcDQG5j3b1LZT1s2BHazReuVYF2EizY5Zw7WMhvSrvVWKrq0QmiD"
    "/Zu/ChWQV/TrB+SxH8P0jVy858CpdzC1pQ6TOh41iKP4RhAf/ek8OCXhEcfr8MKlvvWK//TC33r9fxoMeBoaaA0UwBc724vXtB5c"
    "t7uEZ907kN31qOG8M0Nv9QCnBG1wTtSE/yOhV8s9C37ZSvhwndMx0d/y97ncg9Nv4A+NDXsBvix5zEXDm0X9VWbHwjBpb8srbH2G"
    "1OcHKglaNGkqwvr6y1YIva0/MZiBZQWDKfRmx0FTgO7mKKxruGLVBa31D1ZikCwkmvaN7B9UWMQjJNqMb3JPQBzNJ/RlzCor2RMK"
    "ZrWOFhmhMIldMZYzXAD4PBRM5SPN01mT2WVle0O7oLVLWsPVQWCQM1x9WirvVdbDhGT+cnDXi8IgzqkPuXhlYacfH+GDOaXRNL9/"
    "mFw8jo8aeh3mA+cdoLMys7z0AHv2WlfTtOcTwgMLJaHU5Ls9NOkxizDgJg9Xf3mUek1FWFF7gxmI+pU6329gMIKZ4VSHmrZFh9Kt"
    "QkHAmat4sU4ByAorPXhTXz0r1rQGFFM7ApnFbpVo/7hGBeYvfpJCqEbsYJj6YxDmZOU6CP9th6hOPd2bWva/Y91hDJzjltGPXcoR"
    "/BnB75iY4gSXHm/v/ALxvVy5tvQw+P4w/o5JhYZvQG8JZJv5rumZCpkWbdH5sf+iFaJIPHIe/GwCOlXv6B/eDw45ACOzweF3hizm"
    "PU3Ri2Dr+u28ulOmXRi6ZW19CtO6ZZ3etkgGY+hbwqMU63S3HGcIbLjE/KIWMd9BLPhLg6xiRxRoV000SYkidedHoZcKC6KY1u7G"
    "F5hRfaeoIpiP6ni2gTIxlAfVcQ5gyH2Njo5hs5gvhFfRaRmX+xj3zMVZFMEKkazFz2wqE4LK6RaqffRLdp5zDXFGAuNaU55jCu7i"
    "7S8VMtePx6FV9IdOBU+6sK4Vr7NaHZjHkD3D6DyDZ1XB1i4svsnMxluWqIjvWMBXzLncuxQyBjM1r9j9jrXSCPogtoHr0wWli/FI"
    "9F8fORU/CE5YEjhOBkV6b50LjvBIB5XCE0NTdwOcCYTi97vwZSrfGlYxU+R+dXQmfhve+OBNPI5Oyd5j+OpID6k1uOToweR0jS4c"
    "jcz63NWGjEHgyxT02QHXmAuvlTf4N7JSWRQbGnkfjw2Nb/GoET9JNRM4dipbIfvI7/6tLy67qNF04aEb3vyt1KScPocrkcMP/NAx"
    "v0efO+1yyN2dTU5zZjN9HVULOssH/OgtQn/+OtBNTk4KhNb6tTeywu/FXUUbSS+dTnrO+4W/ofBNBpTxKh2ng6J3IzlOzul8E4oL"
    "q/iSP58u83gN39L+xt2vjBbbzLG3DK09qCagw38BzO1I6w=="
)


def glyph_cells() -> np.ndarray:
    """``(95, CELL_H, CELL_W)`` uint8 coverage for characters 32..126."""
    raw = zlib.decompress(base64.b64decode(_DATA))
    return np.frombuffer(raw, dtype=np.uint8).reshape(95, CELL_H, CELL_W)
